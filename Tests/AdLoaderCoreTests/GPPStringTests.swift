import AdLoaderCore
import Testing

@Suite struct GPPStringTests {
    /// The IAB GPP specification's examples: a TCF EU v2 section alone, and with US privacy v1.
    static let tcfSection = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"
    static let tcfOnly = "DBABMA~" + tcfSection
    static let tcfAndUSP = "DBACNY~" + tcfSection + "~1YNN"

    @Test func theSpecificationsTCFExampleDecodes() throws {
        let gpp = try GPPString(decoding: Self.tcfOnly)
        #expect(gpp.version == 1 && gpp.sectionIDs == [2])
        let tcf = try #require(gpp.tcfConsent)
        // The fields of that TCF string, decoded independently of TCFConsent.
        #expect(tcf.cmpID == 31 && tcf.cmpVersion == 640 && tcf.consentLanguage == "en")
        #expect(tcf.vendorListVersion == 126 && tcf.policyVersion == 2 && tcf.publisherCountryCode == "DE")
        #expect(tcf.purposesConsent.isEmpty)
        // The header without its padding characters (as some CMPs write it) reads the same.
        #expect(try GPPString(decoding: "DBABM~" + Self.tcfSection).sectionIDs == [2])
    }

    @Test func twoSectionsAndTheUSPrivacyString() throws {
        let gpp = try GPPString(decoding: Self.tcfAndUSP)
        #expect(gpp.sectionIDs == [2, 6])
        #expect(gpp.usPrivacy == "1YNN" && gpp.tcfConsent != nil)
        #expect(gpp.section(6) == "1YNN" && gpp.section(7) == nil)
    }

    @Test func aUSNationalSectionIsKeptAsTextAndDecoded() throws {
        let gpp = try GPPString(decoding: "DBABLA~BVVqAAEABgA.QA")
        #expect(gpp.sectionIDs == [7] && gpp.section(7) == "BVVqAAEABgA.QA" && gpp.tcfConsent == nil)
        let usnat = try #require(gpp.usNational)
        #expect(usnat.saleOptOut == 2 && usnat.sharingOptOut == 2 && usnat.targetedAdvertisingOptOut == 2)
        #expect(!usnat.optsOut && usnat.gpc == false)
    }

    /// IAB's reference implementation's test vectors (iabgpp-java, UsNatTest): the second
    /// release's layout (16 sensitive data categories, 3 child consents), with and without its
    /// GPC segment, and a first-release core (12 and 2).
    @Test func theReferenceImplementationsUSNationalVectors() throws {
        let full = try USNationalSection(decoding: "BVVVkkkkkpFY.YA")
        #expect(full.version == 1)
        #expect(
            [
                full.sharingNotice, full.saleOptOutNotice, full.sharingOptOutNotice,
                full.targetedAdvertisingOptOutNotice, full.sensitiveDataProcessingOptOutNotice,
                full.sensitiveDataLimitUseNotice, full.saleOptOut, full.sharingOptOut, full.targetedAdvertisingOptOut,
            ] == Array(repeating: 1, count: 9))
        #expect(full.sensitiveDataProcessing == [2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2])
        #expect(full.knownChildSensitiveDataConsents == [2, 1, 0])
        #expect(full.personalDataConsents == 1 && full.mspaCoveredTransaction == 1)
        #expect(full.mspaOptOutOptionMode == 1 && full.mspaServiceProviderMode == 2)
        #expect(full.gpc == true && full.optsOut)
        var core = try USNationalSection(decoding: "BVVVkkkkkpFY")
        #expect(core.gpc == nil)
        core.gpc = true
        #expect(core == full)
        let first = try USNationalSection(decoding: "BVQqAAAACg")
        #expect(
            [
                first.sharingNotice, first.saleOptOutNotice, first.sharingOptOutNotice,
                first.targetedAdvertisingOptOutNotice, first.sensitiveDataProcessingOptOutNotice,
                first.sensitiveDataLimitUseNotice,
            ] == [1, 1, 1, 1, 0, 0])
        #expect(first.saleOptOut == 2 && first.sharingOptOut == 2 && first.targetedAdvertisingOptOut == 2)
        #expect(first.sensitiveDataProcessing == Array(repeating: 0, count: 12))
        #expect(first.knownChildSensitiveDataConsents == [0, 0])
        #expect(first.personalDataConsents == 2 && first.mspaCoveredTransaction == 2)
        #expect(first.mspaOptOutOptionMode == 0 && first.mspaServiceProviderMode == 0)
        #expect(first.gpc == nil && !first.optsOut)
        #expect(try USNationalSection(decoding: "BAAAAAAAAABA.QA").gpc == false)
    }

    @Test(arguments: [
        ("", "segment 1 is empty"),
        ("z", "Version 51, only US national v1"),
        ("BVV", "cut short in SaleOptOut"),
        ("BVVVkk", "cut short in SensitiveDataProcessing 7"),
        ("BVVVkkkk", "cut short in KnownChildSensitiveDataConsents 1"),
        ("BVQqAAAAA", "cut short in MspaCoveredTransaction"),
        ("BV!", "segment 1: byte 3 (0x21) is not base64url"),
        ("BVVVkkkkkpFY.", "segment 2 is empty"),
        ("BVVVkkkkkpFY.AA", "segment 2: SegmentType 0, a GPC segment is 1"),
        ("BVVVkkkkkpFY.YA.QA", "3 segments"),
        ("\u{0}\u{FFFF}~~", "is not base64url"),
    ])
    func badUSNationalSectionsSayWhatIsWrong(text: String, message: String) {
        #expect {
            try USNationalSection(decoding: text)
        } throws: { error in
            (error as? GPPString.DecodingError)?.message.contains(message) == true
        }
    }

    /// A first-release US national core with only the three opt-outs set (1 opted out, 2 not).
    static func usnat(sale: Int = 2, sharing: Int = 2, targeted: Int = 2) -> String {
        func two(_ value: Int) -> String { value == 1 ? "01" : value == 2 ? "10" : "00" }
        let bits =
            "000001" + String(repeating: "01", count: 6) + two(sale) + two(sharing) + two(targeted)
            + String(repeating: "0", count: 24 + 4) + "10" + "01" + "0000"
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = ""
        var index = bits.startIndex
        while index < bits.endIndex {
            let next = bits.index(index, offsetBy: 6)
            text.append(alphabet[Int(bits[index..<next], radix: 2)!])
            index = next
        }
        return text
    }

    /// As Prebid Server reads US national: opting out of sale, sharing or targeted advertising
    /// means no personalised ads, so the call needs a class that opts out, as `us_privacy`
    /// "1YYY" does (the standard `limited`: `device.lmt: 1`, no identifier).
    @Test func aUSNationalOptOutNeedsAnOptOutClassAsUSPrivacyDoes() throws {
        let policy = ConsentPolicy(
            classes: ConsentPolicy.standardClasses + [
                ConsentClass(name: "usnat", terms: ConsentTerms(gpp: "DBABLA~" + Self.usnat(), gppSectionIDs: [7])),
                ConsentClass(
                    name: "usnat-limited",
                    terms: ConsentTerms(
                        gpp: "DBABLA~" + Self.usnat(sale: 1), gppSectionIDs: [7], usPrivacy: "1YYN",
                        limitAdTracking: true)),
            ])
        func decide(_ signals: PrivacySignals) -> String {
            switch policy.classify(signals) {
            case .consentClass(let index): policy.classes[index].name
            case .refused(let rule, _): "refused:\(rule)"
            case .invalid(let field, _): "invalid:\(field)"
            }
        }
        #expect(try !USNationalSection(decoding: Self.usnat()).optsOut)
        #expect(decide(PrivacySignals(gpp: "DBABLA~" + Self.usnat())) == "usnat")
        for optOut in [Self.usnat(sale: 1), Self.usnat(sharing: 1), Self.usnat(targeted: 1), "BVVVkkkkkpFY.YA"] {
            #expect(try USNationalSection(decoding: optOut).optsOut, "\(optOut)")
            #expect(decide(PrivacySignals(gpp: "DBABLA~" + optOut)) == "usnat-limited", "\(optOut)")
            #expect(decide(PrivacySignals(gpp: "DBABLA~" + optOut, gppSectionIDs: [7])) == "usnat-limited")
            // The same as us_privacy's opt-out: the call's own "1YYY" changes nothing, and
            // "1YNN" does not undo the section's.
            #expect(decide(PrivacySignals(gpp: "DBABLA~" + optOut, usPrivacy: "1YYY")) == "usnat-limited")
            #expect(decide(PrivacySignals(gpp: "DBABLA~" + optOut, usPrivacy: "1YNN")) == "usnat-limited")
        }
        // 0 (not applicable) is no opt-out.
        #expect(decide(PrivacySignals(gpp: "DBABLA~" + Self.usnat(sale: 0, sharing: 0, targeted: 0))) == "usnat")
        // Without a class that both lists section 7 and opts out, the call is refused saying so.
        guard
            case .refused(_, let message) = ConsentPolicy.standard.classify(
                PrivacySignals(gpp: "DBABLA~" + Self.usnat(sale: 1)))
        else {
            Issue.record("an opted-out usnat borrower found a standard class")
            return
        }
        #expect(message.contains("US opt-out") && message.contains("GPP sections 7"))
        // A section 7 that does not decode makes the call invalid, never a class.
        #expect(decide(PrivacySignals(gpp: "DBABLA~BVV")) == "invalid:privacy.gpp")
    }

    @Test func rangesOfSectionIDs() throws {
        // One entry, a range: 7 (Fibonacci 01011) to 7 + 5 (00011).
        #expect(
            try GPPString(
                decoding: "DBABrG~BVVqAAEABgA.QA~" + Array(repeating: "BA", count: 5).joined(separator: "~")
            ).sectionIDs
                == [7, 8, 9, 10, 11, 12])
        // Two single entries, 2 and then 2 + 5.
        #expect(try GPPString(decoding: "DBACMM~" + Self.tcfSection + "~BVVqAAEABgA.QA").sectionIDs == [2, 7])
    }

    @Test(arguments: [
        ("", "empty"),
        ("DBABMA", "lists 1 section(s) (2) but 0 follow"),
        ("DBABMA~a~b", "lists 1 section(s) (2) but 2 follow"),
        ("CBABMA~" + GPPStringTests.tcfSection, "Type 2, a GPP header is 3"),
        ("DCABMA~" + GPPStringTests.tcfSection, "Version 2, only GPP v1"),
        ("DB", "cut short in NumberOfSections"),
        ("DBAB", "cut short in section entry 0"),
        ("D!ABMA~x", "is not base64url"),
        ("DBABMA~", "section 2 is empty"),
        ("DBABMA~BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA", "section 2 (TCF EU v2): version 1"),
        ("DBACNY~" + GPPStringTests.tcfSection + "~2YNN", "section 6 (US privacy v1)"),
        ("DBABLA~BVV!", "section 7 (US national v1): segment 1: byte 4"),
        ("DBABLA~z", "section 7 (US national v1): Version 51, only US national v1"),
        ("DBABVVVVVVV", "Fibonacci code of more than 30 bits"),
    ])
    func badStringsSayWhatIsWrong(string: String, message: String) {
        #expect {
            try GPPString(decoding: string)
        } throws: { error in
            (error as? GPPString.DecodingError)?.message.contains(message) == true
        }
    }

    @Test func boundsHold() {
        #expect(throws: GPPString.DecodingError.self) {
            try GPPString(decoding: "DBABMA~" + String(repeating: "A", count: GPPString.maximumLength))
        }
        // 4,095 entries (the 12-bit count's most), each id one more than the last: refused at 65.
        var bits = "000011" + "000001" + "111111111111" + String(repeating: "011", count: 4_095)
        bits += String(repeating: "0", count: (6 - bits.count % 6) % 6)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var header = ""
        var index = bits.startIndex
        while index < bits.endIndex {
            let next = bits.index(index, offsetBy: 6)
            header.append(alphabet[Int(bits[index..<next], radix: 2)!])
            index = next
        }
        #expect {
            try GPPString(decoding: header + "~A")
        } throws: { error in
            (error as? GPPString.DecodingError)?.message.contains("more than 64 sections") == true
        }
    }

    // MARK: Classes derived from GPP

    static let euString = TCFConsent(purposesConsent: [1, 2, 7], vendorConsents: [10, 20]).encoded
    static let policy = ConsentPolicy(
        classes: ConsentPolicy.standardClasses + [
            ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true, consentString: euString)),
            ConsentClass(name: "usnat", terms: ConsentTerms(gpp: "DBABLA~BVVqAAEABgA.QA", gppSectionIDs: [7])),
        ])

    private func decide(_ signals: PrivacySignals) -> String {
        switch Self.policy.classify(signals) {
        case .consentClass(let index): Self.policy.classes[index].name
        case .refused(let rule, _): "refused:\(rule)"
        case .invalid(let field, _): "invalid:\(field)"
        }
    }

    @Test func theTCFSectionOfAGPPStringStandsForTheConsentString() {
        // The borrower's consent, carried only in GPP: the GDPR applies and its purposes decide.
        let granted = "DBABMA~" + Self.euString
        #expect(decide(PrivacySignals(gpp: granted)) == "eu")
        #expect(decide(PrivacySignals(gpp: granted, gppSectionIDs: [2])) == "eu")
        // The specification's example consents to no purpose: no auction may run.
        #expect(decide(PrivacySignals(gpp: Self.tcfOnly)) == "refused:consent.requiredPurposes")
        // A call that says the GDPR does not apply is taken at its word, and sid without 2 leaves
        // the TCF section unused.
        #expect(decide(PrivacySignals(gdprApplies: false, gpp: granted)) == "default")
        #expect(
            decide(PrivacySignals(gpp: "DBACMM~" + Self.euString + "~BVVqAAEABgA.QA", gppSectionIDs: [7])) == "usnat")
    }

    @Test func theUSPrivacySectionStandsForUSPrivacy() {
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YYN")) == "limited")
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YNN")) == "default")
        // The call's own us_privacy wins.
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YYN", usPrivacy: "1YNN")) == "default")
    }

    @Test func otherSectionsNeedAClassListingThem() {
        #expect(decide(PrivacySignals(gpp: "DBABLA~BVVqAAEABgA.QA")) == "usnat")
        #expect(decide(PrivacySignals(gpp: "DBABrG~BVVqAAEABgA.QA~BA~BA~BA~BA~BA")) == "refused:consent.classes")
    }

    @Test func anUndecodableGPPStringIsInvalidNotIgnored() {
        #expect(decide(PrivacySignals(gpp: "DBABMA")) == "invalid:privacy.gpp")
        #expect(decide(PrivacySignals(gpp: "not gpp", gppSectionIDs: [7])) == "invalid:privacy.gpp")
    }

    @Test func aClassWithAGPPStringThatDoesNotDecodeIsRefusedAtStart() {
        let policy = ConsentPolicy(classes: [
            ConsentClass(name: "default", terms: ConsentTerms()),
            ConsentClass(name: "us", terms: ConsentTerms(gpp: "DBABLA", gppSectionIDs: [7])),
        ])
        #expect {
            try policy.validate(prefix: "loaders.feed.consent")
        } throws: { error in
            (error as? ConfigError)?.field == "loaders.feed.consent.classes.us.gpp"
        }
    }
}
