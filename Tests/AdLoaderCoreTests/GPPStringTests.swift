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

    @Test func aUSNationalSectionIsKeptAsText() throws {
        let gpp = try GPPString(decoding: "DBABLA~BVVqAAEABgA.QA")
        #expect(gpp.sectionIDs == [7] && gpp.section(7) == "BVVqAAEABgA.QA" && gpp.tcfConsent == nil)
    }

    @Test func rangesOfSectionIDs() throws {
        // One entry, a range: 7 (Fibonacci 01011) to 7 + 5 (00011).
        #expect(
            try GPPString(decoding: "DBABrG~" + Array(repeating: "BA", count: 6).joined(separator: "~")).sectionIDs
                == [7, 8, 9, 10, 11, 12])
        // Two single entries, 2 and then 2 + 5.
        #expect(try GPPString(decoding: "DBACMM~" + Self.tcfSection + "~BA").sectionIDs == [2, 7])
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
        ("DBABLA~BVV!", "section 7: segment 1: byte 4"),
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
        #expect(decide(PrivacySignals(gpp: "DBACMM~" + Self.euString + "~BA", gppSectionIDs: [7])) == "usnat")
    }

    @Test func theUSPrivacySectionStandsForUSPrivacy() {
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YYN")) == "limited")
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YNN")) == "default")
        // The call's own us_privacy wins.
        #expect(decide(PrivacySignals(gpp: "DBABTA~1YYN", usPrivacy: "1YNN")) == "default")
    }

    @Test func otherSectionsNeedAClassListingThem() {
        #expect(decide(PrivacySignals(gpp: "DBABLA~BVVqAAEABgA.QA")) == "usnat")
        #expect(decide(PrivacySignals(gpp: "DBABrG~BA~BA~BA~BA~BA~BA")) == "refused:consent.classes")
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
