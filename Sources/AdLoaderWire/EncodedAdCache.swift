import AdLoaderCore

/// Remembers the protobuf encoding of recently lent ads, so that lending the same ad again
/// copies its bytes instead of encoding ~20 fields.
///
/// An ad in a pool does not change between lends (only `showCount` when it is shown), and
/// a hit requires the cached ad to be *equal* to the one being encoded (`Ad ==`,
/// which is cheap for strings sharing storage), so a hit writes exactly the bytes a fresh
/// encoding would. The cache is bounded: when full it is emptied and refills with what is
/// lent next.
///
/// - Important: not thread-safe; keep one per event loop (the server's).
public final class EncodedAdCache {
    private struct Entry {
        var ad: Ad
        var bytes: [UInt8]
    }

    /// The most ads kept; reaching it empties the cache.
    public let maximumCount: Int
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    @exclusivity(unchecked) public private(set) var hits = 0
    @exclusivity(unchecked) public private(set) var misses = 0

    /// - Parameter maximumCount: the most encodings kept (each costs about the ad's size).
    public init(maximumCount: Int = 16_384) {
        precondition(maximumCount > 0, "maximumCount must be positive")
        self.maximumCount = maximumCount
    }

    /// The number of encodings held.
    public var count: Int { entries.count }

    /// Calls `body` with the encoding of `ad` (what `Ad`'s protobuf encoding is).
    func withEncoding<R>(of ad: Ad, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let entry = entries[ad.id], entry.ad == ad {
            hits += 1
            return entry.bytes.withUnsafeBytes(body)
        }
        misses += 1
        let size = ad.protoSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        bytes.appendWritten(count: size) { ad.write(to: &$0) }
        if entries.count >= maximumCount { entries.removeAll(keepingCapacity: true) }
        entries[ad.id] = Entry(ad: ad, bytes: bytes)
        return bytes.withUnsafeBytes(body)
    }
}

extension ResponseFrame {
    /// Appends the whole frame answering a Borrow: what
    /// `append(callID:message:end:to:)` writes, with the lease's ad taken from `cache`
    /// (see ``EncodedAdCache``) and every length computed before writing, in one pass.
    public static func append(
        callID: UInt64, borrow message: BorrowResponseMessage, cache: EncodedAdCache, to buffer: inout [UInt8]
    ) {
        let outcome = message.outcomeWireValue
        guard let lease = message.lease else {
            append(callID: callID, message: message, to: &buffer)
            return
        }
        cache.withEncoding(of: lease.ad) { ad in
            let leaseSize = lease.protoSize(adSize: ad.count)
            let messageSize = ProtoSize.varintField(key: 0x08, outcome) + ProtoSize.delimited(key: 0x12, leaseSize)
            var length = 2 + ProtoSize.delimited(key: 0x12, messageSize)  // message field, end
            if callID != 0 { length += 1 + ProtoSize.varint(callID) }
            buffer.appendWritten(count: 5 + length) { w in
                w.responseFrameHeader(length: length, callID: callID)
                w.byte(0x12)
                w.varint(UInt64(messageSize))
                w.varintField(key: 0x08, outcome)
                w.byte(0x12)
                w.varint(UInt64(leaseSize))
                lease.writeHeader(to: &w, adSize: ad.count)
                w.bytes(ad)
                w.byte(0x18)  // end: true
                w.byte(0x01)
            }
        }
    }
}
