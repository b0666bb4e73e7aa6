/// How one loader maps a borrower's privacy signals to one of its consent classes: the
/// classes in order, the first whose terms are at least as strict as the signals wins
/// (``ConsentClass/takes(_:consent:)``); a call without signals takes ``defaultClass``.
///
/// The standard policy (no classes configured) follows Prebid Server's enforcement:
/// `default` (nothing restricted), `limited` (`device.lmt: 1` and a US opt-out: LMT, ATT
/// restricted or denied, `us_privacy` "1?Y?", or a GPP US national section opting out of sale,
/// sharing or targeted advertising), `coppa` (`regs.coppa: 1` and all of
/// `limited`). A GDPR borrower needs a configured class with `gdpr` and the consent string the
/// operator's CMP gives for what the class buys: the standard policy has none, so GDPR
/// borrowers are refused naming it. Whatever the classes, TCF purpose 2 (basic ads) must be
/// consented for any auction (``requiredPurposes``); pooled requests never carry geolocation,
/// so special feature 1 (precise geo) is never needed.
public struct ConsentPolicy: Hashable, Sendable {
    /// The most classes a loader has: each is a pool per ad unit.
    public static let maximumClasses = 16

    public var classes: [ConsentClass]
    /// The class of a call without signals; one of ``classes``.
    public var defaultClass: String
    /// TCF purposes a GDPR borrower must have consented to for any auction.
    public var requiredPurposes: Set<Int>

    public init(classes: [ConsentClass], defaultClass: String = "default", requiredPurposes: Set<Int> = [2]) {
        self.classes = classes
        self.defaultClass = defaultClass
        self.requiredPurposes = requiredPurposes
    }

    public static let standardClasses: [ConsentClass] = [
        ConsentClass(name: "default", terms: ConsentTerms()),
        ConsentClass(name: "limited", terms: ConsentTerms(usPrivacy: "1YYN", limitAdTracking: true)),
        ConsentClass(name: "coppa", terms: ConsentTerms(usPrivacy: "1YYN", coppa: true, limitAdTracking: true)),
    ]

    /// `default`, `limited`, `coppa`; GDPR borrowers refused until a GDPR class is configured.
    public static let standard = ConsentPolicy(classes: standardClasses)

    /// What a call's signals come to.
    public enum Decision: Hashable, Sendable {
        /// Lend from (and buy for) this class (an index into ``ConsentPolicy/classes``).
        case consentClass(Int)
        /// No auction may run for these signals; `rule` names what forbids it.
        case refused(rule: String, message: String)
        /// The signals themselves are malformed (a TCF string that does not decode).
        case invalid(field: String, message: String)
    }

    /// The class for `signals` (nil: the call gave none).
    public func classify(_ signals: PrivacySignals?) -> Decision {
        guard var signals else {
            return .consentClass(classes.firstIndex { $0.name == defaultClass } ?? 0)
        }
        if !signals.gpp.isEmpty {
            switch Self.applyingGPP(to: signals) {
            case .success(let derived): signals = derived
            case .failure(let error):
                return .invalid(field: "privacy.gpp", message: "not a GPP v1 string: \(error.message)")
            }
        }
        var consent: TCFConsent? = nil
        if signals.gdprApplies == true {
            if signals.tcfConsent.isEmpty {
                return .refused(
                    rule: "tcf",
                    message: "the GDPR applies and no TCF consent string was given: no auction may run")
            }
            do {
                consent = try TCFConsent(decoding: signals.tcfConsent)
            } catch {
                return .invalid(field: "privacy.tcf_consent", message: "not a TCF v2 consent string: \(error.message)")
            }
            let missing = requiredPurposes.subtracting(consent!.purposesConsent).sorted()
            if !missing.isEmpty {
                return .refused(
                    rule: "consent.requiredPurposes",
                    message:
                        "TCF purpose \(missing.map(String.init).joined(separator: ", ")) not consented: no auction may run (purpose 2, basic ads, is needed for any)"
                )
            }
        } else if !signals.tcfConsent.isEmpty {
            // A string without "GDPR applies" still has to be one (garbage is refused, not ignored).
            do { _ = try TCFConsent(decoding: signals.tcfConsent) } catch {
                return .invalid(field: "privacy.tcf_consent", message: "not a TCF v2 consent string: \(error.message)")
            }
        }
        if let index = classes.firstIndex(where: { $0.takes(signals, consent: consent) }) {
            return .consentClass(index)
        }
        var said: [String] = []
        if signals.gdprApplies == true { said.append("GDPR applies") }
        if signals.coppa { said.append("COPPA") }
        if signals.isTrackingLimited { said.append("tracking limited") }
        if signals.optsOutOfSale { said.append("US opt-out") }
        if !signals.gppSectionIDs.isEmpty {
            said.append("GPP sections \(signals.gppSectionIDs.map(String.init).joined(separator: ","))")
        }
        let hint =
            signals.gdprApplies == true
            ? "; a GDPR borrower needs a class with gdpr true and a consentString its consent covers" : ""
        return .refused(
            rule: "consent.classes",
            message: "no consent class takes these signals (\(said.joined(separator: ", ")))\(hint)")
    }

    /// `signals` with what its GPP string says (Prebid Server's reading of `regs.gpp`): the
    /// applicable sections are `gpp_sid` when given, else every section of the string. When
    /// section 2 (TCF EU v2) applies, the GDPR applies unless the call said otherwise, and its
    /// TCF string stands for a missing `tcf_consent`; section 6 (US privacy v1) stands for a
    /// missing `us_privacy`. Sections read this way are taken out of the applicable ids, so
    /// they are judged by the GDPR and US privacy rules; the others (US national, states, ...)
    /// still need a class listing them (``ConsentClass/takes(_:consent:)``). Section 7 (US
    /// national) that opts out (``USNationalSection/optsOut``: SaleOptOut, SharingOptOut or
    /// TargetedAdvertisingOptOut 1) also reads as a US privacy opt-out ("1YYN", unless the
    /// call's `us_privacy` already opts out): like `us_privacy` "1YYY", it needs a class whose
    /// `usPrivacy` opts out (the standard `limited`: `device.lmt: 1`, no identifier).
    public static func applyingGPP(to signals: PrivacySignals) -> Result<PrivacySignals, GPPString.DecodingError> {
        let gpp: GPPString
        do { gpp = try GPPString(decoding: signals.gpp) } catch { return .failure(error) }
        var derived = signals
        var applicable = signals.gppSectionIDs.isEmpty ? gpp.sectionIDs.map(UInt32.init) : signals.gppSectionIDs
        if applicable.contains(UInt32(GPPString.tcfEUv2)), let section = gpp.section(GPPString.tcfEUv2) {
            if derived.gdprApplies == nil { derived.gdprApplies = true }
            if derived.tcfConsent.isEmpty { derived.tcfConsent = section }
            applicable.removeAll { $0 == UInt32(GPPString.tcfEUv2) }
        }
        if applicable.contains(UInt32(GPPString.usPrivacyV1)), let usPrivacy = gpp.usPrivacy {
            if derived.usPrivacy.isEmpty { derived.usPrivacy = usPrivacy }
            applicable.removeAll { $0 == UInt32(GPPString.usPrivacyV1) }
        }
        if applicable.contains(UInt32(GPPString.usNationalV1)), gpp.usNational?.optsOut == true,
            !derived.optsOutOfSale
        {
            derived.usPrivacy = "1YYN"
        }
        derived.gppSectionIDs = applicable
        return .success(derived)
    }

    /// Checks the classes.
    /// - Throws: ``ConfigError`` naming `PREFIX.classes`, `PREFIX.classes.NAME.consentString` or
    ///   `PREFIX.defaultClass`.
    public func validate(prefix: String) throws(ConfigError) {
        if classes.isEmpty { throw ConfigError(field: "\(prefix).classes", message: "must name at least one class") }
        if classes.count > Self.maximumClasses {
            throw ConfigError(
                field: "\(prefix).classes",
                message: "at most \(Self.maximumClasses) classes (each is a pool per ad unit), got \(classes.count)")
        }
        var names: Set<String> = []
        for consentClass in classes {
            let field = "\(prefix).classes.\(consentClass.name)"
            if consentClass.name.isEmpty || consentClass.name.utf8.count > 64
                || !consentClass.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            {
                throw ConfigError(
                    field: "\(prefix).classes",
                    message:
                        "a class name must be 1...64 printable ASCII characters without spaces, got \"\(consentClass.name)\""
                )
            }
            if !names.insert(consentClass.name).inserted {
                throw ConfigError(field: field, message: "duplicate class name")
            }
            let terms = consentClass.terms
            if terms.gdpr {
                if terms.consentString.isEmpty {
                    throw ConfigError(
                        field: "\(field).consentString",
                        message: "required with gdpr: the TCF string the class's requests carry")
                }
                do { _ = try TCFConsent(decoding: terms.consentString) } catch {
                    throw ConfigError(
                        field: "\(field).consentString", message: "not a TCF v2 consent string: \(error.message)")
                }
            } else if !terms.consentString.isEmpty {
                throw ConfigError(field: "\(field).consentString", message: "only with gdpr true")
            }
            if !terms.usPrivacy.isEmpty
                && (terms.usPrivacy.utf8.count != 4 || !terms.usPrivacy.hasPrefix("1"))
            {
                throw ConfigError(
                    field: "\(field).usPrivacy",
                    message: "must be a US privacy string such as \"1YNN\", got \"\(terms.usPrivacy)\"")
            }
            if terms.gpp.isEmpty != terms.gppSectionIDs.isEmpty {
                throw ConfigError(field: "\(field).gpp", message: "gpp and gppSectionIDs go together")
            }
            if !terms.gpp.isEmpty {
                do { _ = try GPPString(decoding: terms.gpp) } catch {
                    throw ConfigError(field: "\(field).gpp", message: "not a GPP v1 string: \(error.message)")
                }
            }
        }
        if !names.contains(defaultClass) {
            throw ConfigError(
                field: "\(prefix).defaultClass",
                message:
                    "must be one of the classes (\(classes.map(\.name).joined(separator: ", "))), got \"\(defaultClass)\""
            )
        }
        if let bad = requiredPurposes.first(where: { !(1...24).contains($0) }) {
            throw ConfigError(field: "\(prefix).requiredPurposes", message: "TCF purposes are 1...24, got \(bad)")
        }
    }
}
