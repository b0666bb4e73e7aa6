public import AdLoaderModel
internal import CAdLoaderProto

/// `BorrowRequest`: lend one ad, optionally waiting for one.
public struct BorrowRequestMessage: WireMessage {
    /// Required; the server answers INVALID_ARGUMENT when empty.
    public var adUnitID: String
    /// Empty means "default".
    public var loader: String
    /// The feed cell; empty means none.
    public var slot: String
    /// 0 answers at once; otherwise the call parks up to this long for an ad.
    public var waitMilliseconds: UInt32
    /// The device's privacy signals; nil: the loader's default consent class.
    public var privacy: PrivacySignalsMessage?

    public init(
        adUnitID: String, loader: String = "", slot: String = "", waitMilliseconds: UInt32 = 0,
        privacy: PrivacySignalsMessage? = nil
    ) {
        self.adUnitID = adUnitID
        self.loader = loader
        self.slot = slot
        self.waitMilliseconds = waitMilliseconds
        self.privacy = privacy
    }

    public var stringFieldWithNUL: String? {
        firstFieldWithNUL(["ad_unit_id": adUnitID, "loader": loader, "slot_key": slot])
            ?? privacy?.stringFields.sorted { $0.key < $1.key }.first { $0.value.utf8.contains(0) }?.key
    }

    /// Decodes in place (see ProtoScanner.swift): what protobuf-c accepts, with the same values.
    /// - Throws: `.badMessage` when the bytes do not decode, or "ad_unit_id: must be valid
    ///   UTF-8 without NUL bytes" (`loader`, `slot_key` likewise) for a string holding a NUL
    ///   or invalid UTF-8.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        // Fields in locals, moved into `self` at the end: decoding into a message value and
        // assigning it copied and destroyed it through its value witnesses (~530 instructions
        // per gRPC Borrow, callgrind).
        var adUnitID = ""
        var loader = ""
        var slot = ""
        var waitMilliseconds: UInt32 = 0
        var privacy: PrivacySignalsMessage? = nil
        var scanner = ProtoScanner(bytes)
        var invalid: StaticString? = nil
        var mergedPrivacy = false
        do throws(ProtoScanner.Failure) {
            while !mergedPrivacy, let field = try scanner.next() {
                switch field.number {
                case 1: adUnitID = try ProtoScanner.string(field, name: "ad_unit_id", invalid: &invalid)
                case 2: loader = try ProtoScanner.string(field, name: "loader", invalid: &invalid)
                case 3: slot = try ProtoScanner.string(field, name: "slot_key", invalid: &invalid)
                case 4: waitMilliseconds = try ProtoScanner.uint32(field)
                case 10:
                    // Sent twice: protobuf-c's merge of the two occurrences is the reference (a
                    // fuzz finding: an empty second one), and no real client does it: decode
                    // with protobuf-c rather than imitate its merge rules here.
                    if privacy != nil {
                        mergedPrivacy = true
                        break
                    }
                    var signals = PrivacySignalsMessage()
                    try signals.merge(scanning: try ProtoScanner.bytes(field), invalid: &invalid)
                    privacy = signals
                default: break
                }
            }
        } catch {
            throw FrameError(
                code: .badMessage, message: "BorrowRequest of \(bytes.count) bytes does not decode as protobuf")
        }
        if mergedPrivacy {
            self = try BorrowRequestMessage(protobufC: bytes)
            return
        }
        if let invalid { throw FrameError.invalidString("\(invalid)") }
        self.init(
            adUnitID: adUnitID, loader: loader, slot: slot, waitMilliseconds: waitMilliseconds, privacy: privacy)
    }

    /// Decodes with protobuf-c (the tests and the proto-scanner fuzz target compare it with ``init(decoding:)``).
    package init(protobufC bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "BorrowRequest", unpack: adloader__v1__borrow_request__unpack,
            free: adloader__v1__borrow_request__free_unpacked
        ) { m in
            let p = m.pointee
            return BorrowRequestMessage(
                adUnitID: swiftString(p.ad_unit_id), loader: swiftString(p.loader), slot: swiftString(p.slot_key),
                waitMilliseconds: p.wait_ms, privacy: p.privacy.map { PrivacySignalsMessage($0.pointee) })
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__BorrowRequest()
            adloader__v1__borrow_request__init(&m)
            m.ad_unit_id = arena.cString(adUnitID)
            m.loader = arena.cString(loader)
            m.slot_key = arena.cString(slot)
            m.wait_ms = waitMilliseconds
            m.privacy = privacy?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `BorrowResponse`: a lease, or "no ad yet".
public struct BorrowResponseMessage: WireMessage {
    /// `BorrowOutcome`.
    public enum Outcome: Hashable, Sendable {
        /// Zero, or a value this version does not know.
        case unspecified
        case leased
        case reused
        case noAdYet
    }

    public var outcome: Outcome
    /// Set for `.leased` and `.reused`.
    public var lease: Lease?

    public init(outcome: Outcome, lease: Lease? = nil) {
        self.outcome = outcome
        self.lease = lease
    }

    /// The message for a borrow result; nil for `.unavailable` and `.upstreamFailed`, which
    /// are statuses (UNAVAILABLE).
    public init?(_ result: consuming BorrowResult) {
        switch consume result {
        case .leased(let lease, let reused): self.init(outcome: reused ? .reused : .leased, lease: lease)
        case .noAdYet: self.init(outcome: .noAdYet)
        case .unavailable, .upstreamFailed: return nil
        }
    }

    /// The borrow result this message says; nil when the outcome is unspecified or a lease is missing.
    public var result: BorrowResult? {
        switch outcome {
        case .leased, .reused: lease.map { .leased($0, reused: outcome == .reused) }
        case .noAdYet: .noAdYet
        case .unspecified: nil
        }
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "BorrowResponse", unpack: adloader__v1__borrow_response__unpack,
            free: adloader__v1__borrow_response__free_unpacked
        ) { (m) throws(FrameError) -> BorrowResponseMessage in
            let p = m.pointee
            let outcome: Outcome =
                switch p.outcome {
                case ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_LEASED: .leased
                case ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_REUSED: .reused
                case ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_NO_AD_YET: .noAdYet
                default: .unspecified
                }
            var lease: Lease? = nil
            if let l = p.lease { lease = try Lease(l) }
            return BorrowResponseMessage(outcome: outcome, lease: lease)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        let sizes = protoSizes()
        buffer.appendWritten(count: sizes.message) { write(to: &$0, leaseSize: sizes.lease, adSize: sizes.ad) }
    }

    public var encodedSize: Int? { protoSizes().message }

    /// The same bytes as ``encode(into:)``, packed by protobuf-c (the tests and the envelope fuzz target compare both).
    package func encodedWithProtobufC() -> [UInt8] {
        var buffer: [UInt8] = []
        CArena.with { arena in
            var m = Adloader__V1__BorrowResponse()
            adloader__v1__borrow_response__init(&m)
            m.outcome =
                switch outcome {
                case .unspecified: ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_UNSPECIFIED
                case .leased: ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_LEASED
                case .reused: ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_REUSED
                case .noAdYet: ADLOADER__V1__BORROW_OUTCOME__BORROW_OUTCOME_NO_AD_YET
                }
            m.lease = lease?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
        return buffer
    }
}
