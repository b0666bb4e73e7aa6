internal import CAdLoaderProto
internal import CProtobufC

#if canImport(Glibc)
    import Glibc
#endif

/// One metadata key/value of a request, as gRPC metadata (keys lower-case ASCII).
public struct MetadataEntry: Hashable, Sendable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// The client-to-server envelope: one call's request, or the cancellation of a call.
public struct RequestFrame: WireMessage {
    /// Chosen by the client; nonzero and unique among its calls in flight.
    public var callID: UInt64
    /// The full gRPC method name, e.g. ``MethodName/borrow``; empty on a cancel frame.
    public var method: String
    /// The call's deadline relative to the server's receipt of the frame; 0 = none.
    public var timeoutMilliseconds: UInt32
    public var metadata: [MetadataEntry]
    /// The encoded request message (e.g. a ``BorrowRequestMessage``).
    public var message: [UInt8]
    /// Ends the call `callID`; every other field is ignored.
    public var cancel: Bool

    public init(
        callID: UInt64, method: String = "", timeoutMilliseconds: UInt32 = 0, metadata: [MetadataEntry] = [],
        message: [UInt8] = [], cancel: Bool = false
    ) {
        self.callID = callID
        self.method = method
        self.timeoutMilliseconds = timeoutMilliseconds
        self.metadata = metadata
        self.message = message
        self.cancel = cancel
    }

    /// A request frame for `method` carrying `request`.
    public init(
        callID: UInt64, method: String, request: some WireMessage, timeoutMilliseconds: UInt32 = 0,
        metadata: [MetadataEntry] = []
    ) {
        self.init(
            callID: callID, method: method, timeoutMilliseconds: timeoutMilliseconds, metadata: metadata,
            message: request.encoded())
    }

    /// The frame that cancels call `callID`.
    public static func cancel(callID: UInt64) -> RequestFrame { RequestFrame(callID: callID, cancel: true) }

    /// `method`, `metadata.key` or `metadata.value` when one holds a NUL (the request
    /// message is bytes: check it with its own ``WireMessage/stringFieldWithNUL``).
    public var stringFieldWithNUL: String? {
        if method.utf8.contains(0) { return "method" }
        for entry in metadata {
            if let field = firstFieldWithNUL(["metadata.key": entry.key, "metadata.value": entry.value]) {
                return field
            }
        }
        return nil
    }

    /// Decodes an envelope (the body of one length-prefixed frame).
    /// - Throws: ``FrameError`` `.badEnvelope` when the bytes are not a RequestFrame.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "RequestFrame", unpack: adloader__v1__request_frame__unpack,
            free: adloader__v1__request_frame__free_unpacked, code: .badEnvelope
        ) { m in
            let p = m.pointee
            var metadata: [MetadataEntry] = []
            if p.n_metadata > 0, let entries = p.metadata {
                metadata.reserveCapacity(p.n_metadata)
                for i in 0..<p.n_metadata {
                    guard let e = entries[i] else { continue }
                    metadata.append(MetadataEntry(key: swiftString(e.pointee.key), value: swiftString(e.pointee.value)))
                }
            }
            return RequestFrame(
                callID: p.call_id, method: MethodName.interned(p.method), timeoutMilliseconds: p.timeout_ms,
                metadata: metadata, message: swiftBytes(p.message), cancel: p.cancel != 0)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__RequestFrame()
            adloader__v1__request_frame__init(&m)
            m.call_id = callID
            m.method = arena.cString(method)
            m.timeout_ms = timeoutMilliseconds
            if !metadata.isEmpty {
                let entries = arena.allocate(
                    UnsafeMutablePointer<Adloader__V1__MetadataEntry>?.self, count: metadata.count)
                for (i, entry) in metadata.enumerated() {
                    let e = arena.allocate(Adloader__V1__MetadataEntry.self)
                    adloader__v1__metadata_entry__init(e)
                    e.pointee.key = arena.cString(entry.key)
                    e.pointee.value = arena.cString(entry.value)
                    (entries + i).initialize(to: e)
                }
                m.n_metadata = metadata.count
                m.metadata = entries
            }
            m.cancel = cancel ? 1 : 0
            message.withUnsafeBufferPointer { body in
                m.message = ProtobufCBinaryData(len: body.count, data: UnsafeMutablePointer(mutating: body.baseAddress))
                appendPacked(&m, to: &buffer)
            }
        }
    }
}

extension MethodName {
    /// The method name in `p`, reusing the static strings for known methods so that decoding
    /// a request allocates no String for its method.
    static func interned(_ p: UnsafePointer<CChar>?) -> String {
        guard let p else { return "" }
        // One strlen, then a memcmp against the one or two names of that length (they all
        // share the 28-byte service prefix, so comparing String.utf8 byte by byte was costly).
        let length = strlen(p)
        for (index, utf8) in allUTF8.enumerated() where utf8.count == length {
            if utf8.withUnsafeBytes({ memcmp($0.baseAddress!, p, length) }) == 0 { return all[index] }
        }
        return String(cString: p)
    }

    /// The UTF-8 bytes of ``all``, in the same order.
    static let allUTF8: [[UInt8]] = all.map { Array($0.utf8) }
}
