#if canImport(Glibc)
    import Glibc
#endif

/// The metadata of one call, as gRPC's: an ordered list of key/value entries, keys lower-case
/// ASCII, the same key possibly more than once.
///
/// Transports hand a call's request metadata to the service with the call (gRPC: the request
/// headers that are not pseudo-headers or the transport's own, PROTOCOL.md 11.2; framed: the
/// envelope's `metadata` entries), without `authorization`, which the admission step reads
/// and no handler needs. The service answers with response metadata (gRPC: response headers).
///
/// Bounded: at most ``maximumEntries`` entries of at most ``maximumByteCount`` bytes of keys
/// and values together (gRPC's default header list limit is 8 KiB); ``append(key:value:)``
/// refuses an entry past either bound. One class reference, nil when empty: a call without
/// metadata allocates nothing for it, and copying or destroying the value is one retain or
/// release of a nil reference (it is passed with every call, framed and gRPC; an array and a
/// count cost retains, releases and value witnesses per call, callgrind).
public struct CallMetadata: Hashable, Sendable, RandomAccessCollection {
    /// The most entries one call's metadata holds.
    public static let maximumEntries = 64
    /// The most bytes of keys and values one call's metadata holds.
    public static let maximumByteCount = 8192
    /// The response metadata key naming the daemon instance that answered (`listeners.instanceName`).
    public static let instanceKey = "x-adloader-instance"

    /// The entries and their size; copied on write (``append(key:value:)``) when shared.
    @usableFromInline final class Storage: @unchecked Sendable {
        var entries: [MetadataEntry]
        var byteCount: Int

        init(entries: [MetadataEntry], byteCount: Int) {
            self.entries = entries
            self.byteCount = byteCount
        }
    }

    @usableFromInline var storage: Storage?

    /// No entries (inlinable: the transports pass it with nearly every call).
    @inlinable public init() {}

    /// Metadata of `entries`, in order.
    /// - Throws: ``MetadataError`` when they go past a bound.
    public init(_ entries: [(key: String, value: String)]) throws(MetadataError) {
        for entry in entries { try append(key: entry.key, value: entry.value) }
    }

    /// The entries, in order.
    public var entries: [MetadataEntry] { storage?.entries ?? [] }
    /// Bytes of keys and values held.
    public var byteCount: Int { storage?.byteCount ?? 0 }

    @inlinable public var isEmpty: Bool { storage == nil }
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage?.entries.count ?? 0 }
    public subscript(position: Int) -> MetadataEntry { storage!.entries[position] }

    public static func == (lhs: CallMetadata, rhs: CallMetadata) -> Bool { lhs.entries == rhs.entries }

    public func hash(into hasher: inout Hasher) { hasher.combine(entries) }

    /// Adds an entry after the others.
    /// - Throws: ``MetadataError`` when the entry would go past ``maximumEntries`` or
    ///   ``maximumByteCount``; the metadata is then unchanged.
    public mutating func append(key: String, value: String) throws(MetadataError) {
        let size = key.utf8.count + value.utf8.count
        guard count < Self.maximumEntries else {
            throw MetadataError(bound: .entries)
        }
        guard byteCount + size <= Self.maximumByteCount else {
            throw MetadataError(bound: .bytes)
        }
        let entry = MetadataEntry(key: key, value: value)
        if isKnownUniquelyReferenced(&storage) {  // false for nil
            storage!.entries.append(entry)
            storage!.byteCount += size
        } else {
            storage = Storage(entries: entries + [entry], byteCount: byteCount + size)
        }
    }

    /// The value of the last entry with `key`, nil when there is none.
    public func value(for key: String) -> String? { storage?.entries.last { $0.key == key }?.value }

    /// The values of every entry with `key`, in order.
    public func values(for key: String) -> [String] { entries.filter { $0.key == key }.map(\.value) }

    /// Whether a request metadata key is the transport's or the admission step's rather than
    /// the call's: pseudo-headers (`:path`), gRPC's reserved `grpc-` keys, `content-type`,
    /// `content-length`, `te`, `user-agent` and `authorization`. Such entries are not handed
    /// to the service.
    ///
    /// Non-generic, on the name's bytes as nghttp2 hands them over, compared with `memcmp`:
    /// it runs for every request header the gRPC transport does not read itself (a generic
    /// version over `Collection` cost ~18k instructions per gRPC call, callgrind).
    public static func isTransportKey(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let base = key.baseAddress, key.count > 0 else { return true }
        if base.load(as: UInt8.self) == UInt8(ascii: ":") { return true }
        switch key.count {
        case 2: if equals(base, "te") { return true }
        case 10: if equals(base, "user-agent") { return true }
        case 12: if equals(base, "content-type") { return true }
        case 13: if equals(base, "authorization") { return true }
        case 14: if equals(base, "content-length") { return true }
        default: break
        }
        return key.count >= 5 && equals(base, "grpc-")
    }

    /// ``isTransportKey(_:)`` of a key given as text.
    public static func isTransportKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { isTransportKey(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the bytes at `base` start with `literal`'s (the caller checked the length).
    @inline(__always)
    private static func equals(_ base: UnsafeRawPointer, _ literal: StaticString) -> Bool {
        memcmp(base, literal.utf8Start, literal.utf8CodeUnitCount) == 0
    }
}

/// Metadata past a bound of ``CallMetadata``: the call is refused RESOURCE_EXHAUSTED with ``message``.
///
/// A trivial value (which bound, no text stored): the framed envelope's header carries one
/// on every call, and a stored string there cost retains and releases per call (callgrind).
public struct MetadataError: Error, Hashable, Sendable {
    /// Which bound the metadata went past.
    public enum Bound: Hashable, Sendable {
        /// ``CallMetadata/maximumEntries``.
        case entries
        /// ``CallMetadata/maximumByteCount``.
        case bytes
    }

    public var bound: Bound

    public init(bound: Bound) { self.bound = bound }

    public var message: String {
        switch bound {
        case .entries: "metadata: more than \(CallMetadata.maximumEntries) entries"
        case .bytes: "metadata: more than \(CallMetadata.maximumByteCount) bytes of keys and values"
        }
    }

    /// The status a call whose metadata went past a bound is refused with.
    public var status: Status { Status(code: .resourceExhausted, message: message) }
}
