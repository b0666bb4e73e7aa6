public import AdLoaderCore

/// A journal's bytes read back into the pools they describe: pure, no I/O.
///
/// Frames are applied in order; the first frame cut short or failing its checksum ends the
/// replay (``cutBytes`` says how much was left). A record that names an ad or a lease the
/// journal never introduced is counted in ``unknownRecords`` and skipped; an ad record that
/// does not decode is counted in ``unreadableAds``: its ad is dropped as uncertain.
public struct PoolJournalReplay {
    struct Lease {
        var id: UInt64
        var slot: String?
        var expiresAt: Int64
    }

    struct Entry {
        var consentClass: String
        var ad: Ad
        var context: [UInt8]?
        var lease: Lease?
    }

    // The state is an array of ads in arrival order (nil where one left) and two indexes into
    // it, so that a lease or a return (most of a journal: two records per Borrow and Return)
    // costs one lookup and no copy of an entry; a compaction and a restart replay tens of
    // MiB of them.
    private var entries: [Entry?] = []
    private var holes = 0
    private var indexOfAd: [String: Int] = [:]
    private var indexOfLease: [UInt64: Int] = [:]
    /// ``applyFrame(_:)``'s records, its capacity kept from frame to frame.
    private var records: [PoolJournalRecord] = []
    /// The time of the last frame applied (the last pass written before the stop or crash).
    public private(set) var lastWrittenAt: AdInstant?
    /// Frames applied.
    public private(set) var frames = 0
    /// Bytes after the last whole frame (cut by a crash in the middle of a write).
    public private(set) var cutBytes = 0
    public private(set) var unknownRecords = 0
    public private(set) var unreadableAds = 0
    /// ``feed(_:)``: the bytes of a frame whose end has not come yet, and whether the magic did.
    private var pending: [UInt8] = []
    private var sawMagic = false

    public init() {}

    /// A journal read in pieces (the compaction reads its file a chunk at a time, so its memory
    /// is the pools', not the file's): the magic, then every frame applied as soon as it is
    /// whole; a frame cut by a piece's end waits for the next piece. After the last piece,
    /// ``cutBytes`` is what no whole frame took, as with ``init(file:)``.
    /// - Throws: ``StoreRecordError`` when the first bytes are not the journal's magic.
    public mutating func feed(_ piece: UnsafeRawBufferPointer) throws(StoreRecordError) {
        pending.append(contentsOf: piece)
        if !sawMagic {
            let magic = PoolJournalRecord.fileMagic
            guard pending.count >= magic.count else { return }
            guard pending[0..<magic.count].elementsEqual(magic) else {
                throw StoreRecordError("not a pool journal (no \"ADLJRNL1\" magic)")
            }
            pending.removeFirst(magic.count)
            sawMagic = true
        }
        apply(frames: pending[...])
        // Only a frame's beginning is left: keep it, not the piece's capacity.
        pending = Array(pending.suffix(cutBytes))
    }

    /// After the last ``feed(_:)``.
    /// - Throws: ``StoreRecordError`` when the pieces were shorter than the magic.
    public func finishFeeding() throws(StoreRecordError) {
        guard sawMagic else { throw StoreRecordError("not a pool journal (\(pending.count) bytes, no magic)") }
    }

    /// Reads a whole journal file (its magic, then its frames).
    /// - Throws: ``StoreRecordError`` when the file is not a journal (another magic).
    public init(file: [UInt8]) throws(StoreRecordError) {
        let magic = PoolJournalRecord.fileMagic
        guard file.count >= magic.count, Array(file[0..<magic.count]) == magic else {
            throw StoreRecordError("not a pool journal (\(file.count) bytes, no \"ADLJRNL1\" magic)")
        }
        apply(frames: file[magic.count...])
    }

    /// Applies every whole frame of `bytes`, stopping at the first one that is not whole.
    public mutating func apply(frames bytes: ArraySlice<UInt8>) {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            guard bytes.endIndex - offset >= 8 else { break }
            let start = offset + 8
            let (length, sum) = bytes.withUnsafeBytes { raw in
                let header = offset - bytes.startIndex
                return (
                    Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: header, as: UInt32.self))),
                    UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: header + 4, as: UInt32.self))
                )
            }
            guard length <= bytes.endIndex - start else { break }
            let payload = bytes[start..<(start + length)]
            let intact = payload.withUnsafeBytes { PoolJournalRecord.checksum($0) == sum }
            guard intact, applyFrame(payload) else { break }
            offset = start + length
        }
        cutBytes = bytes.endIndex - offset
    }

    /// One frame: its time, then its records; false (nothing applied) when it does not decode.
    private mutating func applyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
        var reader = StoreRecordReader(payload)
        records.removeAll(keepingCapacity: true)
        let time: Int64
        do throws(StoreRecordError) {
            time = try reader.signed()
            while !reader.isAtEnd { records.append(try PoolJournalRecord.read(&reader)) }
        } catch {
            return false
        }
        for record in records { apply(record, at: time) }
        lastWrittenAt = AdInstant(unixMilliseconds: time)
        frames += 1
        return true
    }

    /// Applies one record written at `time` (unix ms).
    public mutating func apply(_ record: PoolJournalRecord, at time: Int64) {
        switch record {
        case .arrived(let consentClass, let bytes):
            guard let decoded = try? StoreRecordCodec.decodeAd(bytes) else {
                unreadableAds += 1
                return
            }
            if let old = indexOfAd[decoded.ad.id] { vacate(old) }
            indexOfAd[decoded.ad.id] = entries.count
            entries.append(Entry(consentClass: consentClass, ad: decoded.ad, context: decoded.context))
        case .leased(let adID, let leaseID, let slot, let expiresAt):
            guard let index = indexOfAd[adID] else {
                unknownRecords += 1
                return
            }
            if let old = entries[index]!.lease { indexOfLease[old.id] = nil }
            entries[index]!.lease = Lease(id: leaseID, slot: slot, expiresAt: expiresAt.unixMilliseconds)
            indexOfLease[leaseID] = index
        case .returned(let leaseID, let shown):
            guard let index = indexOfLease.removeValue(forKey: leaseID) else {
                unknownRecords += 1
                return
            }
            entries[index]?.lease = nil
            if shown { entries[index]?.ad.showCount += 1 }
        case .removed(let adID):
            guard let index = indexOfAd.removeValue(forKey: adID) else {
                unknownRecords += 1
                return
            }
            vacate(index)
        }
    }

    /// Empties the entry at `index` (its ad left, or arrived again and moves to the end); once
    /// more than half the array is holes, closes them up.
    private mutating func vacate(_ index: Int) {
        if let lease = entries[index]?.lease { indexOfLease[lease.id] = nil }
        entries[index] = nil
        holes += 1
        guard holes > 1024, holes * 2 > entries.count else { return }
        var moved = [Int](repeating: -1, count: entries.count)
        var kept: [Entry?] = []
        kept.reserveCapacity(entries.count - holes)
        for (old, entry) in entries.enumerated() where entry != nil {
            moved[old] = kept.count
            kept.append(entry)
        }
        entries = kept
        holes = 0
        indexOfAd = indexOfAd.mapValues { moved[$0] }
        indexOfLease = indexOfLease.mapValues { moved[$0] }
    }

    /// Ads held (leased or not).
    public var adCount: Int { indexOfAd.count }
    /// Leases open.
    public var leaseCount: Int { indexOfLease.count }

    /// The pools as snapshots taken at ``lastWrittenAt``, sorted by loader, ad unit and class;
    /// ads in arrival order (a restore orders them by expiry).
    ///
    /// A renewal (a slot borrowed again moves its lease's end by the lease timeout) is not
    /// journaled, and may have happened after the last write: so a lease ends no earlier than
    /// `leasesEndNoEarlierThan` (the daemon gives the restart's time plus the longest lease
    /// timeout configured), never after its ad's expiry. A lease the client kept renewing is
    /// then never reclaimed, and its ad lent to another cell, because of a renewal the crash lost.
    public func snapshots(leasesEndNoEarlierThan floor: AdInstant? = nil) -> [PoolSnapshot] {
        let takenAt = lastWrittenAt ?? AdInstant(unixMilliseconds: 0)
        struct Key: Hashable, Comparable {
            var loader: String
            var adUnitID: String
            var consentClass: String
            static func < (a: Key, b: Key) -> Bool {
                (a.loader, a.adUnitID, a.consentClass) < (b.loader, b.adUnitID, b.consentClass)
            }
        }
        var pools: [Key: PoolSnapshot] = [:]
        for case let entry? in entries {
            let key = Key(loader: entry.ad.loader, adUnitID: entry.ad.adUnitID, consentClass: entry.consentClass)
            if pools[key] == nil {
                var snapshot = PoolSnapshot(
                    loader: key.loader, adUnitID: key.adUnitID, format: entry.ad.format, takenAt: takenAt,
                    demand: .init(
                        averageRate: 0, slowRate: 0, windowStart: takenAt, windowCount: 0, latencyMilliseconds: 0,
                        adsPerRequest: nil))
                snapshot.consentClass = key.consentClass
                pools[key] = snapshot
            }
            let pooled = PoolSnapshot.PooledAd(ad: entry.ad, sourceState: entry.context)
            if let lease = entry.lease {
                let end = min(
                    entry.ad.expiresAt.unixMilliseconds,
                    max(lease.expiresAt, floor?.unixMilliseconds ?? lease.expiresAt))
                pools[key]?.leases.append(
                    .init(
                        leaseID: lease.id, slot: lease.slot, expiresAt: AdInstant(unixMilliseconds: end),
                        pooled: pooled))
            } else {
                pools[key]?.ads.append(pooled)
            }
        }
        return pools.keys.sorted().compactMap { key in
            guard var snapshot = pools[key] else { return nil }
            snapshot.leases.sort { $0.leaseID < $1.leaseID }
            return snapshot
        }
    }
}
