/// What every upstream request for one consent class says, and nothing more: the class's
/// configured regulation fields. A pooled request carries these instead of any borrower's
/// own signals, and never a device or user identifier.
public struct ConsentTerms: Hashable, Sendable {
    /// `regs.gdpr: 1`, with ``consentString`` as `user.consent`.
    public var gdpr: Bool
    /// The class's TCF v2 string (`user.consent`); required with ``gdpr``.
    public var consentString: String
    /// `regs.gpp` and `regs.gpp_sid`.
    public var gpp: String
    public var gppSectionIDs: [UInt32]
    /// `regs.us_privacy`.
    public var usPrivacy: String
    /// `regs.coppa: 1`.
    public var coppa: Bool
    /// `device.lmt: 1`.
    public var limitAdTracking: Bool

    public init(
        gdpr: Bool = false, consentString: String = "", gpp: String = "", gppSectionIDs: [UInt32] = [],
        usPrivacy: String = "", coppa: Bool = false, limitAdTracking: Bool = false
    ) {
        self.gdpr = gdpr
        self.consentString = consentString
        self.gpp = gpp
        self.gppSectionIDs = gppSectionIDs
        self.usPrivacy = usPrivacy
        self.coppa = coppa
        self.limitAdTracking = limitAdTracking
    }

    /// The terms say the user opted out of sale (`us_privacy` "1?Y?").
    public var optsOutOfSale: Bool { PrivacySignals(usPrivacy: usPrivacy).optsOutOfSale }
}

/// One consent class of a loader: a name (part of every pool key) and the terms its requests carry.
public struct ConsentClass: Hashable, Sendable {
    public var name: String
    public var terms: ConsentTerms
    /// ``ConsentTerms/consentString`` decoded (set by ``ConsentPolicy/validate(prefix:)``'s caller
    /// through ``ConsentPolicy/init(classes:defaultClass:requiredPurposes:)``); nil without one.
    public private(set) var consent: TCFConsent?

    public init(name: String, terms: ConsentTerms) {
        self.name = name
        self.terms = terms
        self.consent = terms.consentString.isEmpty ? nil : try? TCFConsent(decoding: terms.consentString)
    }

    /// Whether an ad bought under this class may be lent to a borrower with `signals`: the
    /// terms are at least as strict as the signals (Prebid Server's enforcement).
    /// - COPPA needs a COPPA class; LMT or ATT restricted/denied needs `lmt`; a US privacy
    ///   opt-out needs an opt-out string;
    /// - GDPR applying needs a GDPR class whose consent string grants no purpose, special
    ///   feature or vendor the borrower's (`consent`, decoded) does not; a GDPR class takes
    ///   only borrowers to whom the GDPR applies;
    /// - GPP sections need a class whose `gppSectionIDs` include every one of them.
    public func takes(_ signals: PrivacySignals, consent borrower: TCFConsent?) -> Bool {
        if signals.coppa && !terms.coppa { return false }
        if signals.isTrackingLimited && !terms.limitAdTracking { return false }
        if signals.optsOutOfSale && !terms.optsOutOfSale { return false }
        if !signals.gppSectionIDs.allSatisfy(terms.gppSectionIDs.contains) { return false }
        let gdpr = signals.gdprApplies == true
        if gdpr != terms.gdpr { return false }
        if gdpr {
            guard let borrower, let mine = consent else { return false }
            guard mine.purposesConsent.isSubset(of: borrower.purposesConsent),
                mine.specialFeatureOptIns.isSubset(of: borrower.specialFeatureOptIns),
                borrower.vendorConsents.isSuperset(of: mine.vendorConsents)
            else { return false }
        }
        return true
    }
}
