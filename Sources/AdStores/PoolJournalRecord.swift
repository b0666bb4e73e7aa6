public import AdLoaderCore

/// One change of a pool as the pool store's journal keeps it: pure values and bytes, no I/O.
///
/// A journal is a file of frames, each the changes of one loop pass (``PoolJournal``); a
/// frame is `[u32 payload length][u32 FNV-1a of the payload][payload]` (little-endian), the
/// payload the pass's time then its records, each a kind byte and its fields in
/// ``StoreRecordWriter``'s varints and strings. A frame cut short or whose checksum does not
/// match ends the replay there (a crash in the middle of a write): what follows is reported,
/// never half-read.
public enum PoolJournalRecord: Hashable, Sendable {
    /// An ad joined the pool of (its loader, its ad unit, `consentClass`); `record` is
    /// ``StoreRecordCodec/encode(_:context:)``'s bytes.
    case arrived(consentClass: String, record: [UInt8])
    /// An ad was lent under a lease.
    case leased(adID: String, leaseID: UInt64, slot: String?, expiresAt: AdInstant)
    /// A lease ended; its ad went back to the pool (a `removed` record follows when it did not).
    case returned(leaseID: UInt64, shown: Bool)
    /// An ad left its pool for good (expired, consumed, removed).
    case removed(adID: String)

    enum Kind: UInt8 {
        case arrived = 1
        case leased
        case returned
        case removed
    }

    /// The first bytes of every journal file.
    public static let fileMagic: [UInt8] = Array("ADLJRNL1".utf8)

    func write(into writer: inout StoreRecordWriter) {
        switch self {
        case .arrived(let consentClass, let record):
            writer.byte(Kind.arrived.rawValue)
            writer.string(consentClass)
            writer.blob(record)
        case .leased(let adID, let leaseID, let slot, let expiresAt):
            writer.byte(Kind.leased.rawValue)
            writer.string(adID)
            writer.unsigned(leaseID)
            writer.optionalString(slot)
            writer.signed(expiresAt.unixMilliseconds)
        case .returned(let leaseID, let shown):
            writer.byte(Kind.returned.rawValue)
            writer.unsigned(leaseID)
            writer.bool(shown)
        case .removed(let adID):
            writer.byte(Kind.removed.rawValue)
            writer.string(adID)
        }
    }

    static func read(_ reader: inout StoreRecordReader) throws(StoreRecordError) -> PoolJournalRecord {
        let code = try reader.byte()
        switch Kind(rawValue: code) {
        case .arrived: return .arrived(consentClass: try reader.string(), record: try reader.blob())
        case .leased:
            return .leased(
                adID: try reader.string(), leaseID: try reader.unsigned(), slot: try reader.optionalString(),
                expiresAt: AdInstant(unixMilliseconds: try reader.signed()))
        case .returned: return .returned(leaseID: try reader.unsigned(), shown: try reader.bool())
        case .removed: return .removed(adID: try reader.string())
        case nil: throw StoreRecordError("journal record kind \(code)")
        }
    }

    /// The record an event of the loader makes, nil for an event that changes nothing kept.
    public init?(_ event: AdEvent) {
        switch event.kind {
        case .received:
            // Only an ad that joined the pool carries `ad`; one dropped on arrival does not.
            guard let ad = event.ad else { return nil }
            self = .arrived(
                consentClass: event.consentClass,
                record: StoreRecordCodec.encode(ad, context: ad.sourceContext?.snapshotState))
        case .leased:
            guard let adID = event.adID, let leaseID = event.leaseID, let expiresAt = event.expiresAt else {
                return nil
            }
            self = .leased(adID: adID, leaseID: leaseID, slot: event.slot, expiresAt: expiresAt)
        case .returned:
            guard let leaseID = event.leaseID else { return nil }
            self = .returned(leaseID: leaseID, shown: event.shown)
        case .expired, .removed:
            guard let adID = event.adID else { return nil }
            self = .removed(adID: adID)
        case .loadFinished, .poolRemoved, .loaderChanged, .heldBack, .restored:
            return nil
        }
    }

    // MARK: Frames

    /// Appends one frame holding `payload` (a time and records) to `file`.
    static func appendFrame(_ payload: [UInt8], to file: inout [UInt8]) {
        let length = UInt32(payload.count)
        let sum = checksum(payload)
        for shift in stride(from: 0, to: 32, by: 8) { file.append(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { file.append(UInt8(truncatingIfNeeded: sum >> UInt32(shift))) }
        file.append(contentsOf: payload)
    }

    /// FNV-1a, 32 bits: enough to tell a frame cut or overwritten by a crash.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum(UnsafeRawBufferPointer($0)) }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    /// Writes the record `event` makes (``init(_:)``) straight into `writer`, without the
    /// record value in between (the journal's per-call path); `scratch` is a reusable buffer
    /// for an arriving ad's encoding. Writes the same bytes as `PoolJournalRecord(event)?.write`.
    /// - Returns: false, writing nothing, for an event that changes nothing kept.
    static func write(
        _ event: AdEvent, into writer: inout StoreRecordWriter, scratch: inout StoreRecordWriter
    ) -> Bool {
        switch event.kind {
        case .received:
            guard let ad = event.ad else { return false }
            scratch.removeAll()
            StoreRecordCodec.encode(ad, context: ad.sourceContext?.snapshotState, into: &scratch)
            writer.byte(Kind.arrived.rawValue)
            writer.string(event.consentClass)
            writer.blob(scratch)
        case .leased:
            guard let adID = event.adID, let leaseID = event.leaseID, let expiresAt = event.expiresAt else {
                return false
            }
            writer.byte(Kind.leased.rawValue)
            writer.string(adID)
            writer.unsigned(leaseID)
            writer.optionalString(event.slot)
            writer.signed(expiresAt.unixMilliseconds)
        case .returned:
            guard let leaseID = event.leaseID else { return false }
            writer.byte(Kind.returned.rawValue)
            writer.unsigned(leaseID)
            writer.bool(event.shown)
        case .expired, .removed:
            guard let adID = event.adID else { return false }
            writer.byte(Kind.removed.rawValue)
            writer.string(adID)
        case .loadFinished, .poolRemoved, .loaderChanged, .heldBack, .restored:
            return false
        }
        return true
    }
}
