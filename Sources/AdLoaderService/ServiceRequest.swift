public import AdLoaderWire

/// One decoded call of `adloader.v1.NativeAdLoader`: what a transport hands the service.
///
/// Decoded by the method's ``ServiceMethod`` descriptor, so that every transport decodes the
/// same methods the same way.
public enum ServiceRequest: Hashable, Sendable {
    case prefetch(PrefetchRequestMessage)
    case borrow(BorrowRequestMessage)
    case returnLease(ReturnRequestMessage)
    case stats(StatsRequestMessage)
    case watch(WatchRequestMessage)
    case appOpen(AppOpenRequestMessage)
    case setLoaderEnabled(SetLoaderEnabledRequestMessage)
    case reload(ReloadRequestMessage)
    case serverInfo(ServerInfoRequestMessage)
    case plan(PlanRequestMessage)

    /// Decodes the request message of `method` where its bytes are (Borrow and Return, the hot
    /// calls, without copying).
    /// - Parameters:
    ///   - method: the full gRPC method name, e.g. ``MethodName/borrow``.
    ///   - message: the encoded request message.
    /// - Throws: ``Status`` UNIMPLEMENTED for an unknown method; the decoding error's status
    ///   (INVALID_ARGUMENT naming the field) when the message does not decode.
    public init(method: String, message: UnsafeRawBufferPointer) throws(Status) {
        // The hot methods by identity first: decoders intern known method names (the same
        // storage as MethodName's), and comparing a Return's name with Borrow's by content
        // was a 34-byte compare (~120 instructions, callgrind). Any other string falls
        // through to the descriptors' names, compared by content.
        if Self.isSameStorage(method, MethodName.borrow) {
            self = .borrow(try Self.decode(message))
            return
        }
        if Self.isSameStorage(method, MethodName.returnLease) {
            self = .returnLease(try Self.decode(message))
            return
        }
        guard let descriptor = ServiceMethod(fullName: method) else {
            throw Status(code: .unimplemented, message: "unknown method \"\(method)\"")
        }
        self = try descriptor.decode(message)
    }

    private static func decode<M: WireMessage>(_ bytes: UnsafeRawBufferPointer) throws(Status) -> M {
        do throws(FrameError) {
            return try M(decoding: bytes)
        } catch {
            throw error.status
        }
    }

    /// Whether `a` and `b` are the same bytes in memory (then they are equal; else they may
    /// still be).
    @inline(__always)
    private static func isSameStorage(_ a: String, _ b: String) -> Bool {
        let same = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.baseAddress == y.baseAddress && x.count == y.count }
        }
        return same == true
    }

    /// Whether `method` is one this service serves.
    public static func isKnown(_ method: String) -> Bool { ServiceMethod(fullName: method) != nil }
}
