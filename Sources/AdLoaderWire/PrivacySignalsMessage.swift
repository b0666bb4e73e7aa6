public import AdLoaderModel
internal import CAdLoaderProto

/// `PrivacySignals` as it travels: the enum fields as the raw numbers sent (a value this
/// version does not know is kept, and refused by ``signals()``), so that decoding accepts
/// exactly what protobuf-c does.
public struct PrivacySignalsMessage: Hashable, Sendable {
    /// `Gdpr`: 0 not said, 1 applies, 2 does not apply.
    public var gdpr: Int32
    public var tcfConsent: String
    public var gpp: String
    public var gppSectionIDs: [UInt32]
    public var usPrivacy: String
    public var coppa: Bool
    public var limitAdTracking: Bool
    /// `AttStatus`: 0 not said, else Apple's raw value + 1.
    public var attStatus: Int32

    public init(
        gdpr: Int32 = 0, tcfConsent: String = "", gpp: String = "", gppSectionIDs: [UInt32] = [],
        usPrivacy: String = "", coppa: Bool = false, limitAdTracking: Bool = false, attStatus: Int32 = 0
    ) {
        self.gdpr = gdpr
        self.tcfConsent = tcfConsent
        self.gpp = gpp
        self.gppSectionIDs = gppSectionIDs
        self.usPrivacy = usPrivacy
        self.coppa = coppa
        self.limitAdTracking = limitAdTracking
        self.attStatus = attStatus
    }

    /// The message for `signals`.
    public init(_ signals: PrivacySignals) {
        self.init(
            gdpr: signals.gdprApplies.map { $0 ? 1 : 2 } ?? 0, tcfConsent: signals.tcfConsent, gpp: signals.gpp,
            gppSectionIDs: signals.gppSectionIDs, usPrivacy: signals.usPrivacy, coppa: signals.coppa,
            limitAdTracking: signals.limitAdTracking,
            attStatus: signals.trackingAuthorization.map { Int32($0.rawValue) + 1 } ?? 0)
    }

    /// The signals said.
    /// - Throws: ``FrameError`` `.badMessage` naming `privacy.gdpr` or `privacy.att_status` for
    ///   an enum value this version does not know (the server answers INVALID_ARGUMENT).
    public func signals() throws(FrameError) -> PrivacySignals {
        let gdprApplies: Bool?
        switch gdpr {
        case 0: gdprApplies = nil
        case 1: gdprApplies = true
        case 2: gdprApplies = false
        default: throw FrameError(code: .badMessage, message: "privacy.gdpr: unknown value \(gdpr) (0...2)")
        }
        let tracking: PrivacySignals.TrackingAuthorization?
        if attStatus == 0 {
            tracking = nil
        } else if let value = PrivacySignals.TrackingAuthorization(rawValue: UInt32(bitPattern: attStatus &- 1)) {
            tracking = value
        } else {
            throw FrameError(code: .badMessage, message: "privacy.att_status: unknown value \(attStatus) (0...4)")
        }
        return PrivacySignals(
            gdprApplies: gdprApplies, tcfConsent: tcfConsent, gpp: gpp, gppSectionIDs: gppSectionIDs,
            usPrivacy: usPrivacy, coppa: coppa, limitAdTracking: limitAdTracking, trackingAuthorization: tracking)
    }

    /// Reads the fields of one occurrence of the message into `self`: as protobuf-c merges a
    /// message field sent more than once, scalars take the last value and `gpp_sid` grows.
    /// - Throws: `Failure` where protobuf-c's unpack fails.
    mutating func merge(scanning bytes: UnsafeRawBufferPointer, invalid: inout StaticString?) throws(ProtoScanner
        .Failure)
    {
        var scanner = ProtoScanner(bytes)
        while let field = try scanner.next() {
            switch field.number {
            case 1: gdpr = Int32(bitPattern: try ProtoScanner.uint32(field))
            case 2: tcfConsent = try ProtoScanner.string(field, name: "privacy.tcf_consent", invalid: &invalid)
            case 3: gpp = try ProtoScanner.string(field, name: "privacy.gpp", invalid: &invalid)
            case 4:
                if field.wireType == ProtoScanner.lengthPrefixed {
                    // Packed: varints back to back, each of at most 10 bytes.
                    let packed = field.value
                    var offset = 0
                    while offset < packed.count {
                        var end = offset
                        while end < packed.count && packed[end] & 0x80 != 0 && end - offset < 10 { end += 1 }
                        guard end < packed.count, end - offset < 10 else { throw ProtoScanner.Failure() }
                        let varint = UnsafeRawBufferPointer(rebasing: packed[offset...end])
                        gppSectionIDs.append(
                            try ProtoScanner.uint32(
                                ScannedField(number: 4, wireType: ProtoScanner.varint, value: varint, raw: varint)))
                        offset = end + 1
                    }
                } else {
                    gppSectionIDs.append(try ProtoScanner.uint32(field))
                }
            case 5: usPrivacy = try ProtoScanner.string(field, name: "privacy.us_privacy", invalid: &invalid)
            case 6: coppa = ProtoScanner.bool(field)
            case 7: limitAdTracking = ProtoScanner.bool(field)
            case 8: attStatus = Int32(bitPattern: try ProtoScanner.uint32(field))
            default: break
            }
        }
    }

    /// From protobuf-c's unpacked struct.
    init(_ p: Adloader__V1__PrivacySignals) {
        self.init(
            gdpr: Int32(truncatingIfNeeded: p.gdpr.rawValue), tcfConsent: swiftString(p.tcf_consent),
            gpp: swiftString(p.gpp),
            gppSectionIDs: p.n_gpp_sid == 0 ? [] : Array(UnsafeBufferPointer(start: p.gpp_sid, count: p.n_gpp_sid)),
            usPrivacy: swiftString(p.us_privacy), coppa: p.coppa != 0, limitAdTracking: p.limit_ad_tracking != 0,
            attStatus: Int32(truncatingIfNeeded: p.att_status.rawValue))
    }

    /// protobuf-c's struct, living in `arena`.
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__PrivacySignals> {
        let m = arena.allocate(Adloader__V1__PrivacySignals.self)
        adloader__v1__privacy_signals__init(m)
        m.pointee.gdpr = Adloader__V1__Gdpr(rawValue: .init(truncatingIfNeeded: gdpr))
        m.pointee.tcf_consent = arena.cString(tcfConsent)
        m.pointee.gpp = arena.cString(gpp)
        if !gppSectionIDs.isEmpty {
            let ids = arena.allocate(UInt32.self, count: gppSectionIDs.count)
            for (index, id) in gppSectionIDs.enumerated() { ids[index] = id }
            m.pointee.n_gpp_sid = gppSectionIDs.count
            m.pointee.gpp_sid = ids
        }
        m.pointee.us_privacy = arena.cString(usPrivacy)
        m.pointee.coppa = coppa ? 1 : 0
        m.pointee.limit_ad_tracking = limitAdTracking ? 1 : 0
        m.pointee.att_status = Adloader__V1__AttStatus(rawValue: .init(truncatingIfNeeded: attStatus))
        return m
    }

    var stringFields: [String: String] {
        ["privacy.tcf_consent": tcfConsent, "privacy.gpp": gpp, "privacy.us_privacy": usPrivacy]
    }
}
