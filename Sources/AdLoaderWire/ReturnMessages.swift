public import AdLoaderModel
internal import CAdLoaderProto

/// `ReturnRequest`: ends a lease.
public struct ReturnRequestMessage: WireMessage {
    /// Required (nonzero); an unknown lease answers NOT_FOUND.
    public var leaseID: UInt64
    public var shown: Bool
    /// Invalidate the ad's creative (``invalidateReason`` required).
    public var invalidate: Bool
    /// Why, e.g. "bad creative"; empty without ``invalidate``.
    public var invalidateReason: String
    /// The device the ad was shown on, forwarded with the billing notice; empty: not said.
    public var deviceIP: String
    public var deviceUserAgent: String

    public init(
        leaseID: UInt64, shown: Bool, invalidate: Bool = false, invalidateReason: String = "", deviceIP: String = "",
        deviceUserAgent: String = ""
    ) {
        self.leaseID = leaseID
        self.shown = shown
        self.invalidate = invalidate
        self.invalidateReason = invalidateReason
        self.deviceIP = deviceIP
        self.deviceUserAgent = deviceUserAgent
    }

    public var stringFieldWithNUL: String? {
        firstFieldWithNUL([
            "invalidate_reason": invalidateReason, "device_ip": deviceIP, "device_user_agent": deviceUserAgent,
        ])
    }

    /// Decodes in place (see ProtoScanner.swift): what protobuf-c accepts, with the same values.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        var message = ReturnRequestMessage(leaseID: 0, shown: false)
        var scanner = ProtoScanner(bytes)
        var invalid: StaticString? = nil
        do throws(ProtoScanner.Failure) {
            while let field = try scanner.next() {
                switch field.number {
                case 1: message.leaseID = try ProtoScanner.uint64(field)
                case 2: message.shown = ProtoScanner.bool(field)
                case 3: message.invalidate = ProtoScanner.bool(field)
                case 4:
                    message.invalidateReason = try ProtoScanner.string(
                        field, name: "invalidate_reason", invalid: &invalid)
                case 5: message.deviceIP = try ProtoScanner.string(field, name: "device_ip", invalid: &invalid)
                case 6:
                    message.deviceUserAgent = try ProtoScanner.string(
                        field, name: "device_user_agent", invalid: &invalid)
                default: break
                }
            }
        } catch {
            throw FrameError(
                code: .badMessage, message: "ReturnRequest of \(bytes.count) bytes does not decode as protobuf")
        }
        if let invalid { throw FrameError.invalidString("\(invalid)") }
        self = message
    }

    /// Decodes with protobuf-c (the tests and the proto-scanner fuzz target compare it with ``init(decoding:)``).
    package init(protobufC bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ReturnRequest", unpack: adloader__v1__return_request__unpack,
            free: adloader__v1__return_request__free_unpacked
        ) { m in
            ReturnRequestMessage(
                leaseID: m.pointee.lease_id, shown: m.pointee.shown != 0, invalidate: m.pointee.invalidate != 0,
                invalidateReason: swiftString(m.pointee.invalidate_reason), deviceIP: swiftString(m.pointee.device_ip),
                deviceUserAgent: swiftString(m.pointee.device_user_agent))
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__ReturnRequest()
            adloader__v1__return_request__init(&m)
            m.lease_id = leaseID
            m.shown = shown ? 1 : 0
            m.invalidate = invalidate ? 1 : 0
            m.invalidate_reason = arena.cString(invalidateReason)
            m.device_ip = arena.cString(deviceIP)
            m.device_user_agent = arena.cString(deviceUserAgent)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `ReturnResponse`: what became of the returned ad.
public struct ReturnResponseMessage: WireMessage {
    /// nil for RETURN_OUTCOME_UNSPECIFIED or a value this version does not know.
    public var outcome: ReturnOutcome?

    public init(outcome: ReturnOutcome?) { self.outcome = outcome }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ReturnResponse", unpack: adloader__v1__return_response__unpack,
            free: adloader__v1__return_response__free_unpacked
        ) { m in
            let outcome: ReturnOutcome? =
                switch m.pointee.outcome {
                case ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_BACK_IN_POOL: .backInPool
                case ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_CONSUMED: .consumed
                case ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_EXPIRED: .expired
                case ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_REMOVED: .removed
                case ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_INVALIDATED: .invalidated
                default: nil
                }
            return ReturnResponseMessage(outcome: outcome)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        let value = outcomeWireValue
        buffer.appendWritten(count: ProtoSize.varintField(key: 0x08, value)) { $0.varintField(key: 0x08, value) }
    }

    public var encodedSize: Int? { ProtoSize.varintField(key: 0x08, outcomeWireValue) }

    var outcomeWireValue: UInt64 {
        switch outcome {
        case nil: 0
        case .backInPool: 1
        case .consumed: 2
        case .expired: 3
        case .removed: 4
        case .invalidated: 5
        }
    }

    /// The same bytes as ``encode(into:)``, packed by protobuf-c (the tests and the envelope fuzz target compare both).
    package func encodedWithProtobufC() -> [UInt8] {
        var buffer: [UInt8] = []
        var m = Adloader__V1__ReturnResponse()
        adloader__v1__return_response__init(&m)
        m.outcome =
            switch outcome {
            case nil: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_UNSPECIFIED
            case .backInPool: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_BACK_IN_POOL
            case .consumed: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_CONSUMED
            case .expired: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_EXPIRED
            case .removed: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_REMOVED
            case .invalidated: ADLOADER__V1__RETURN_OUTCOME__RETURN_OUTCOME_INVALIDATED
            }
        appendPacked(&m, to: &buffer)
        return buffer
    }
}

extension ResponseFrame {
    /// Appends the whole frame answering a Return with `message`: what the generic
    /// `append(callID:message:end:to:)` writes, sized first and written in one pass.
    public static func append(callID: UInt64, returned message: ReturnResponseMessage, to buffer: inout [UInt8]) {
        let outcome = message.outcomeWireValue
        let size = ProtoSize.varintField(key: 0x08, outcome)
        var length = 2  // end
        if callID != 0 { length += 1 + ProtoSize.varint(callID) }
        if size > 0 { length += 1 + ProtoSize.varint(UInt64(size)) + size }
        buffer.appendWritten(count: 5 + length) { w in
            w.responseFrameHeader(length: length, callID: callID)
            if size > 0 {
                w.byte(0x12)
                w.varint(UInt64(size))
                w.varintField(key: 0x08, outcome)
            }
            w.byte(0x18)  // end: true
            w.byte(0x01)
        }
    }
}
