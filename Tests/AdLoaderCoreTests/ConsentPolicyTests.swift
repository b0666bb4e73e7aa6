import AdLoaderCore
import Testing

@Suite struct ConsentPolicyTests {
    static let gdprString = TCFConsent(purposesConsent: [1, 2, 7], vendorConsents: [10, 20]).encoded
    static let gdprPolicy = ConsentPolicy(
        classes: ConsentPolicy.standardClasses + [
            ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true, consentString: gdprString)),
            ConsentClass(
                name: "eu-limited", terms: ConsentTerms(gdpr: true, consentString: gdprString, limitAdTracking: true)),
        ])

    private func name(_ decision: ConsentPolicy.Decision, _ policy: ConsentPolicy = .standard) -> String? {
        if case .consentClass(let index) = decision { return policy.classes[index].name }
        return nil
    }

    @Test func noSignalsTakeTheDefaultClass() {
        #expect(name(ConsentPolicy.standard.classify(nil)) == "default")
        var policy = ConsentPolicy.standard
        policy.defaultClass = "limited"
        #expect(name(policy.classify(nil), policy) == "limited")
    }

    @Test(arguments: [
        (PrivacySignals(), "default"),
        (PrivacySignals(usPrivacy: "1YNN"), "default"),
        (PrivacySignals(usPrivacy: "1NYN"), "limited"),
        (PrivacySignals(limitAdTracking: true), "limited"),
        (PrivacySignals(trackingAuthorization: .denied), "limited"),
        (PrivacySignals(trackingAuthorization: .restricted), "limited"),
        (PrivacySignals(trackingAuthorization: .notDetermined), "default"),
        (PrivacySignals(trackingAuthorization: .authorized), "default"),
        (PrivacySignals(coppa: true), "coppa"),
        (PrivacySignals(usPrivacy: "1YYY", coppa: true, limitAdTracking: true), "coppa"),
        (PrivacySignals(gdprApplies: false), "default"),
    ])
    func standardClasses(signals: PrivacySignals, expected: String) {
        #expect(name(ConsentPolicy.standard.classify(signals)) == expected)
    }

    @Test func gdprWithoutAClassIsRefusedNamingTheRule() {
        let signals = PrivacySignals(gdprApplies: true, tcfConsent: TCFConsent(purposesConsent: [1, 2]).encoded)
        guard case .refused(let rule, let message) = ConsentPolicy.standard.classify(signals) else {
            Issue.record("not refused")
            return
        }
        #expect(rule == "consent.classes")
        #expect(message.contains("GDPR applies") && message.contains("consentString"))
    }

    @Test func gdprWithoutPurposeTwoRunsNoAuction() {
        let signals = PrivacySignals(gdprApplies: true, tcfConsent: TCFConsent(purposesConsent: [1, 3]).encoded)
        guard case .refused(let rule, let message) = Self.gdprPolicy.classify(signals) else {
            Issue.record("not refused")
            return
        }
        #expect(rule == "consent.requiredPurposes")
        #expect(message.contains("purpose 2"))
        guard case .refused(let rule2, _) = Self.gdprPolicy.classify(PrivacySignals(gdprApplies: true)) else {
            Issue.record("no string, not refused")
            return
        }
        #expect(rule2 == "tcf")
    }

    @Test func gdprBorrowerTakesAClassItsConsentCovers() {
        let covering = TCFConsent(purposesConsent: [1, 2, 3, 7], vendorConsents: [5, 10, 20, 30]).encoded
        #expect(
            name(Self.gdprPolicy.classify(PrivacySignals(gdprApplies: true, tcfConsent: covering)), Self.gdprPolicy)
                == "eu")
        #expect(
            name(
                Self.gdprPolicy.classify(
                    PrivacySignals(gdprApplies: true, tcfConsent: covering, limitAdTracking: true)),
                Self.gdprPolicy) == "eu-limited")
        // Vendor 20 not consented: the class's string grants more than the user did.
        let narrower = TCFConsent(purposesConsent: [1, 2, 7], vendorConsents: [10]).encoded
        guard
            case .refused(let rule, _) = Self.gdprPolicy.classify(
                PrivacySignals(gdprApplies: true, tcfConsent: narrower))
        else {
            Issue.record("a narrower consent took the class")
            return
        }
        #expect(rule == "consent.classes")
        // Purpose 7 missing likewise.
        let noSeven = TCFConsent(purposesConsent: [1, 2], vendorConsents: [10, 20]).encoded
        #expect(
            name(Self.gdprPolicy.classify(PrivacySignals(gdprApplies: true, tcfConsent: noSeven)), Self.gdprPolicy)
                == nil)
    }

    @Test func aMalformedStringIsInvalidNotIgnored() {
        for signals in [
            PrivacySignals(gdprApplies: true, tcfConsent: "not a string"),
            PrivacySignals(tcfConsent: "C!!"),
        ] {
            guard case .invalid(let field, _) = Self.gdprPolicy.classify(signals) else {
                Issue.record("garbage accepted: \(signals.tcfConsent)")
                continue
            }
            #expect(field == "privacy.tcf_consent")
        }
    }

    @Test func gppSectionsNeedAClassCarryingThem() {
        var policy = ConsentPolicy.standard
        policy.classes.insert(
            ConsentClass(name: "usnat", terms: ConsentTerms(gpp: "DBABLA~BVVqAAEABgA.QA", gppSectionIDs: [7])), at: 1)
        #expect(name(policy.classify(PrivacySignals(gppSectionIDs: [7])), policy) == "usnat")
        guard case .refused = policy.classify(PrivacySignals(gppSectionIDs: [8])) else {
            Issue.record("a GPP section without a class was lent")
            return
        }
    }

    @Test func validateNamesTheField() {
        func field(_ policy: ConsentPolicy) -> String? {
            do {
                try policy.validate(prefix: "loaders.x.consent")
                return nil
            } catch { return error.field }
        }
        #expect(field(.standard) == nil)
        #expect(field(Self.gdprPolicy) == nil)
        #expect(field(ConsentPolicy(classes: [])) == "loaders.x.consent.classes")
        #expect(
            field(
                ConsentPolicy(
                    classes: (0..<17).map { ConsentClass(name: "c\($0)", terms: ConsentTerms()) }, defaultClass: "c0"))
                == "loaders.x.consent.classes")
        #expect(
            field(
                ConsentPolicy(classes: [ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true))], defaultClass: "eu"))
                == "loaders.x.consent.classes.eu.consentString")
        #expect(
            field(
                ConsentPolicy(
                    classes: [ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true, consentString: "garbage"))],
                    defaultClass: "eu")) == "loaders.x.consent.classes.eu.consentString")
        #expect(
            field(ConsentPolicy(classes: ConsentPolicy.standardClasses, defaultClass: "nope"))
                == "loaders.x.consent.defaultClass")
        #expect(
            field(
                ConsentPolicy(
                    classes: [ConsentClass(name: "a", terms: ConsentTerms(usPrivacy: "YES"))], defaultClass: "a"))
                == "loaders.x.consent.classes.a.usPrivacy")
    }
}
