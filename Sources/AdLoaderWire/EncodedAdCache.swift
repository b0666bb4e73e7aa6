import AdLoaderModel

/// Remembers the protobuf encoding of recently lent ads, so that lending the same ad again
/// copies its bytes instead of encoding ~20 fields.
///
/// An ad in a pool does not change between lends (only `showCount` when it is shown), and
/// a hit requires the cached ad to be *equal* to the one being encoded (`Ad ==`,
/// which is cheap for ads sharing storage), so a hit writes exactly the bytes a fresh
/// encoding would. An ad that changed replaces its entry.
///
/// An entry keeps its ad (strings and all) alive, so the owner must call ``forget(id:)``
/// when an ad leaves the loader for good (``NativeAdvertisementLoader/onAdRetired``): the
/// cache then holds only ads that can still be lent. Without that, a daemon lending short-lived
/// ads kept every ad it had lent until the cache filled (issue 15: +20 MB over 10 minutes).
/// ``maximumCount`` stays as a backstop: when full, the cache is emptied and refills with
/// what is lent next.
///
/// Entries are found by a hash of the ad id in an open-addressing table: cheaper than
/// `Dictionary<String, _>` (SipHash of the id, ~400 instructions per Borrow under load);
/// a weak hash only costs probes, never a wrong answer, since equality decides a hit.
///
/// - Important: not thread-safe; keep one per event loop (the server's).
public final class EncodedAdCache {
    private struct Entry {
        var hash: UInt64
        var ad: Ad
        /// The ad's encoding followed by a ResponseFrame's `end: true` field (0x18 0x01),
        /// so that a Borrow answer ends with one copy.
        var bytes: [UInt8]
    }

    /// The most ads kept; reaching it empties the cache.
    public let maximumCount: Int
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// Open addressing, linear probing: 1 + an index into `entries`, 0 = empty. Its size is
    /// a power of two at least twice `entries.count`.
    @exclusivity(unchecked) private var table = [Int32](repeating: 0, count: 64)
    @exclusivity(unchecked) public private(set) var hits = 0
    @exclusivity(unchecked) public private(set) var misses = 0

    /// - Parameter maximumCount: the most encodings kept (each costs about the ad's size).
    public init(maximumCount: Int = 16_384) {
        precondition(maximumCount > 0 && maximumCount <= Int(Int32.max / 4), "maximumCount must be in 1...2^29")
        self.maximumCount = maximumCount
    }

    /// The number of encodings held.
    public var count: Int { entries.count }

    /// Calls `body` with the encoding of `ad` (what `Ad`'s protobuf encoding is)
    /// followed by the two bytes 0x18 0x01.
    func withEncodingAndEnd<R>(of ad: Ad, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let hash = Self.hash(ad.id)
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        var replacing = -1
        while true {
            let stored = Int(table[slot])
            if stored == 0 { break }
            let index = stored - 1
            if entries[index].hash == hash {
                if entries[index].ad == ad {
                    hits += 1
                    return entries[index].bytes.withUnsafeBytes(body)
                }
                if entries[index].ad.id == ad.id {
                    replacing = index
                    break
                }
            }
            slot = (slot + 1) & mask
        }
        misses += 1
        let size = ad.protoSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 2)
        bytes.appendWritten(count: size) { ad.write(to: &$0) }
        bytes.append(0x18)
        bytes.append(0x01)
        let entry = Entry(hash: hash, ad: ad, bytes: bytes)
        if replacing >= 0 {
            entries[replacing] = entry
        } else {
            if entries.count >= maximumCount { removeAll() }
            insert(entry)
        }
        return bytes.withUnsafeBytes(body)
    }

    /// Drops the entry of the ad with this id, if any: it will not be lent again.
    public func forget(id: String) {
        let hash = Self.hash(id)
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = Int(table[slot])
            if stored == 0 { return }
            if entries[stored - 1].hash == hash && entries[stored - 1].ad.id == id { break }
            slot = (slot + 1) & mask
        }
        let index = Int(table[slot]) - 1
        // Backward-shift deletion keeps every remaining entry reachable from its home slot
        // without tombstones: pull later members of the probe run into the hole.
        var hole = slot
        var next = (slot + 1) & mask
        while table[next] != 0 {
            let home = Int(truncatingIfNeeded: entries[Int(table[next]) - 1].hash) & mask
            // Move it when its home is not cyclically within (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (next - hole) & mask
            if distanceToNext >= distanceToHole {
                table[hole] = table[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        table[hole] = 0
        // Keep `entries` dense: the last entry takes the removed one's place.
        let last = entries.count - 1
        if index != last {
            var lastSlot = Int(truncatingIfNeeded: entries[last].hash) & mask
            while Int(table[lastSlot]) != last + 1 { lastSlot = (lastSlot + 1) & mask }
            table[lastSlot] = Int32(index + 1)
            entries.swapAt(index, last)
        }
        entries.removeLast()
    }

    private func insert(_ entry: Entry) {
        if (entries.count + 1) * 2 > table.count {
            table = [Int32](repeating: 0, count: table.count * 2)
            for index in entries.indices { place(index) }
        }
        entries.append(entry)
        place(entries.count - 1)
    }

    /// Puts entry `index` in the first free slot of its probe sequence.
    private func place(_ index: Int) {
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: entries[index].hash) & mask
        while table[slot] != 0 { slot = (slot + 1) & mask }
        table[slot] = Int32(index + 1)
    }

    private func removeAll() {
        entries.removeAll(keepingCapacity: true)
        for slot in table.indices { table[slot] = 0 }
    }

    /// A hash of the id's UTF-8 bytes, eight at a time (ids are ~20 bytes): each word is
    /// folded in FNV-style, the tail byte by byte, then the result is mixed so that the
    /// table's low bits depend on every byte.
    static func hash(_ id: String) -> UInt64 {
        let prime: UInt64 = 0x0000_0100_0000_01B3
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(id.utf8.count)
        let done: Void? = id.utf8.withContiguousStorageIfAvailable { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var i = 0
            while i + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
                i += 8
            }
            while i < raw.count {
                hash = (hash ^ UInt64(raw[i])) &* prime
                i += 1
            }
        }
        if done == nil {
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* prime }
        }
        hash = (hash ^ (hash >> 31)) &* 0xBF58_476D_1CE4_E5B9
        return hash ^ (hash >> 29)
    }
}

extension ResponseFrame {
    /// Appends the whole frame answering a Borrow: what
    /// `append(callID:message:end:to:)` writes, with the lease's ad taken from `cache`
    /// (see ``EncodedAdCache``) and every length computed before writing: the header in
    /// one pass, then the ad and the end field in one copy.
    public static func append(
        callID: UInt64, borrow message: BorrowResponseMessage, cache: EncodedAdCache, to buffer: inout [UInt8]
    ) {
        guard let lease = message.lease else {
            append(callID: callID, message: message, to: &buffer)
            return
        }
        let outcome = message.outcomeWireValue
        cache.withEncodingAndEnd(of: lease.ad) { adAndEnd in
            let adSize = adAndEnd.count - 2
            let leaseSize = lease.protoSize(adSize: adSize)
            let messageSize = ProtoSize.varintField(key: 0x08, outcome) + ProtoSize.delimited(key: 0x12, leaseSize)
            var length = 2 + ProtoSize.delimited(key: 0x12, messageSize)  // message field, end
            if callID != 0 { length += 1 + ProtoSize.varint(callID) }
            buffer.appendWritten(count: 5 + length - adAndEnd.count) { w in
                w.responseFrameHeader(length: length, callID: callID)
                w.byte(0x12)
                w.varint(UInt64(messageSize))
                w.varintField(key: 0x08, outcome)
                w.byte(0x12)
                w.varint(UInt64(leaseSize))
                lease.writeHeader(to: &w, adSize: adSize)
            }
            buffer.append(contentsOf: adAndEnd.assumingMemoryBound(to: UInt8.self))
        }
    }
}
