import AdLoaderCore
import AdLoaderOpenRTB

/// Fuzzes the TCF v2 decoder and the consent classification: the input is a consent string as
/// a borrower sends it. Decoding returns a consent or throws ``TCFConsent/DecodingError`` —
/// never traps — and a decoded consent re-encodes to a string that decodes to the same value.
/// Classifying the string (the GDPR applying, with and without COPPA and LMT) lands in a class
/// whose terms take the signals, or is refused or invalid; a BidRequest for a class carrying
/// the input as its configured string stays one JSON document the parser reads.
public enum ConsentFuzz: FuzzTarget {
    public static let name = "consent"

    static let policy = ConsentPolicy(
        classes: ConsentPolicy.standardClasses + [
            ConsentClass(
                name: "eu",
                terms: ConsentTerms(
                    gdpr: true, consentString: TCFConsent(purposesConsent: [1, 2], vendorConsents: [10]).encoded)),
            ConsentClass(
                name: "eu-limited",
                terms: ConsentTerms(
                    gdpr: true, consentString: TCFConsent(purposesConsent: [2]).encoded, usPrivacy: "1YYN", coppa: true,
                    limitAdTracking: true)),
        ])

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let string = String(decoding: input, as: UTF8.self)
        var decoded: TCFConsent? = nil
        do {
            decoded = try TCFConsent(decoding: string)
        } catch {
            if error.message.isEmpty { throw FuzzFailure("a decoding error without a message") }
        }
        if let decoded {
            guard decoded.version == 2, decoded.purposesConsent.allSatisfy((1...24).contains),
                decoded.specialFeatureOptIns.allSatisfy((1...12).contains)
            else { throw FuzzFailure("decoded out-of-range fields: \(decoded)") }
            let again: TCFConsent
            do {
                again = try TCFConsent(decoding: decoded.encoded)
            } catch {
                throw FuzzFailure("a decoded consent re-encoded to a string that does not decode: \(error)")
            }
            guard again == decoded else { throw FuzzFailure("re-encoding changed the consent") }
        }
        for (coppa, limited) in [(false, false), (true, false), (false, true)] {
            let signals = PrivacySignals(gdprApplies: true, tcfConsent: string, coppa: coppa, limitAdTracking: limited)
            switch policy.classify(signals) {
            case .consentClass(let index):
                guard let decoded, policy.classes[index].takes(signals, consent: decoded) else {
                    throw FuzzFailure("classified into a class that does not take the signals")
                }
            case .refused(let rule, _):
                if rule.isEmpty { throw FuzzFailure("a refusal without a rule") }
            case .invalid(let field, _):
                guard decoded == nil, field == "privacy.tcf_consent" else {
                    throw FuzzFailure("a decodable string was invalid")
                }
            }
        }
        try checkGPP(string)
        let request = BidRequestBuilder(configuration: OpenRTBSource.Configuration())
            .build(
                AdRequest(
                    adUnitID: "u", consentClass: "eu",
                    consent: ConsentTerms(gdpr: true, consentString: string, usPrivacy: string)),
                count: 1, id: "r")
        do {
            _ = try BidResponseParser.parse(Array(request.utf8), layout: .standard)
        } catch {
            throw FuzzFailure("the request builder wrote invalid JSON for consent \(string.debugDescription): \(error)")
        }
    }

    /// The same input as a GPP string: decoding returns or throws with a message, never traps;
    /// a decoded string has ascending ids within the bounds, one section each, and its TCF and US
    /// national sections decoded exactly when it has them; classifying it (alone, and as the GDPR applying) lands in a
    /// class that takes the signals the string stands for, a refusal with a rule, or `invalid`
    /// naming `privacy.gpp` only when it does not decode.
    static func checkGPP(_ string: String) throws(FuzzFailure) {
        var decoded: GPPString? = nil
        do {
            decoded = try GPPString(decoding: string)
        } catch {
            if error.message.isEmpty { throw FuzzFailure("a GPP decoding error without a message") }
        }
        if let decoded {
            guard decoded.sectionIDs.count <= GPPString.maximumSections,
                decoded.sectionIDs.allSatisfy({ (1...GPPString.maximumSectionID).contains($0) }),
                zip(decoded.sectionIDs, decoded.sectionIDs.dropFirst()).allSatisfy({ $0 < $1 }),
                decoded.sections.count == decoded.sectionIDs.count,
                (decoded.tcfConsent != nil) == decoded.sectionIDs.contains(GPPString.tcfEUv2),
                (decoded.usNational != nil) == decoded.sectionIDs.contains(GPPString.usNationalV1)
            else { throw FuzzFailure("decoded GPP out of its bounds: \(decoded.sectionIDs)") }
        }
        // An empty string is no GPP string at all: the call did not send one.
        guard !string.isEmpty else { return }
        for signals in [
            PrivacySignals(gpp: string), PrivacySignals(gdprApplies: true, gpp: string, gppSectionIDs: [2]),
        ] {
            switch policy.classify(signals) {
            case .consentClass(let index):
                guard decoded != nil, case .success(let derived) = ConsentPolicy.applyingGPP(to: signals) else {
                    throw FuzzFailure("an undecodable GPP string was classified")
                }
                let consent = derived.tcfConsent.isEmpty ? nil : try? TCFConsent(decoding: derived.tcfConsent)
                guard policy.classes[index].takes(derived, consent: consent) else {
                    throw FuzzFailure("a GPP borrower classified into a class that does not take what its string says")
                }
            case .refused(let rule, _):
                if rule.isEmpty { throw FuzzFailure("a refusal without a rule") }
            case .invalid(let field, _):
                // A decoded GPP string's TCF section decoded too: only an undecodable one is invalid.
                guard decoded == nil, field == "privacy.gpp" else {
                    throw FuzzFailure(
                        "invalid \(field) for a GPP string that \(decoded == nil ? "does not" : "does") decode")
                }
            }
        }
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let strings: [(String, String)] = [
            ("purposes-1-2", TCFConsent(purposesConsent: [1, 2]).encoded),
            (
                "vendors",
                TCFConsent(purposesConsent: [1, 2, 3, 7], specialFeatureOptIns: [1], vendorConsents: [1, 10, 755])
                    .encoded
            ),
            ("no-purpose-2", TCFConsent(purposesConsent: [1, 3]).encoded),
            ("segments", TCFConsent(purposesConsent: [2]).encoded + ".IAAA.QAAA"),
            ("version-1", "BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA"),
            ("padding", TCFConsent(purposesConsent: [2]).encoded + "=="),
            ("gpp-tcf", "DBABMA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"),
            ("gpp-tcf-usp", "DBACNY~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN"),
            ("gpp-usnat", "DBABLA~BVVqAAEABgA.QA"),
            ("gpp-usnat-opt-out", "DBABLA~BVVVkkkkkpFY.YA"),
            ("gpp-range", "DBABrG~BVVqAAEABgA.QA~BA~BA~BA~BA~BA"),
            ("gpp-granted", "DBABMA~" + TCFConsent(purposesConsent: [1, 2], vendorConsents: [10]).encoded),
            ("empty", ""),
            ("garbage", "C!\u{0}\u{FF}"),
        ]
        return strings.map { ($0.0, Array($0.1.utf8)) }
    }
}
