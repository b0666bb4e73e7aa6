import AdLoaderCore
import AdLoaderJSON
import AdLoaderTestSupport
import Foundation
import Testing

@testable import AdLoaderOpenRTB

/// The consent model: seeded random sequences of Borrow, Prefetch, Return, source answers and
/// time, each borrow with random privacy signals, against a loader with eight consent classes
/// whose source writes every request as the OpenRTB source does (``BidRequestBuilder``).
/// Invariants, counted over every sequence: no ad lent to a borrower of another class than
/// the one it was bought for; no BidRequest carrying a device or user identifier; no
/// BidRequest whose regs, user.consent and device.lmt differ from its class's terms; a borrow
/// refused exactly when the policy says its signals allow no auction.
@Suite struct ConsentModelTests {
    static let sequences = Int(ProcessInfo.processInfo.environment["CONSENT_MODEL_SEQUENCES"] ?? "") ?? 10_000
    static let steps = 16

    /// Which class an ad was bought for, as the source saw its request.
    final class ClassContext: AdSourceContext {
        let consentClass: String
        init(_ consentClass: String) { self.consentClass = consentClass }
    }

    /// Records every request as the JSON the exchange would get, answers by hand.
    final class WritingSource: DemandSource {
        let builder = BidRequestBuilder(
            configuration: {
                var c = OpenRTBSource.Configuration()
                c.appBundle = "com.example"
                c.deviceOS = "ios"
                c.deviceUserAgent = "UA"
                c.supplyChainASI = "example.com"
                c.supplyChainSID = "1"
                return c
            }())
        var pending: [(request: AdRequest, count: Int, completion: (Result<[DeliveredAd], UpstreamError>) -> Void)] = []
        var written: [(request: AdRequest, json: JSONValue)] = []
        var serial = 0

        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {
            serial += 1
            let text = builder.build(request, count: count, id: "a\(serial)")
            written.append((request, (try? JSONValue.parse(text)) ?? .null))
            pending.append((request, count, completion))
        }
    }

    static let eu = TCFConsent(purposesConsent: [1, 2], vendorConsents: [10]).encoded
    static let euWide = TCFConsent(
        purposesConsent: [1, 2, 3, 4, 7], specialFeatureOptIns: [1], vendorConsents: [10, 20]
    ).encoded
    static let policy = ConsentPolicy(
        classes: ConsentPolicy.standardClasses + [
            // The class buying with more consent first: a borrower who granted it is lent from it.
            ConsentClass(name: "eu-wide", terms: ConsentTerms(gdpr: true, consentString: euWide)),
            ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true, consentString: eu)),
            ConsentClass(
                name: "eu-limited",
                terms: ConsentTerms(gdpr: true, consentString: eu, usPrivacy: "1YYN", limitAdTracking: true)),
            ConsentClass(
                name: "eu-coppa",
                terms: ConsentTerms(
                    gdpr: true, consentString: eu, usPrivacy: "1YYN", coppa: true, limitAdTracking: true)),
            ConsentClass(
                name: "usnat",
                terms: ConsentTerms(
                    gpp: "DBABLA~BVVqAAEABgA.QA", gppSectionIDs: [7], usPrivacy: "1YYN", limitAdTracking: true)),
        ])

    static let consentStrings = [
        "", eu, euWide,
        TCFConsent(purposesConsent: [1, 2, 3, 4, 7], specialFeatureOptIns: [1], vendorConsents: [10, 20, 30]).encoded,
        TCFConsent(purposesConsent: [1]).encoded, TCFConsent(purposesConsent: [2], vendorConsents: [11]).encoded,
        "C!garbage",
    ]

    static func randomSignals(_ g: inout SplitMix64Model) -> PrivacySignals? {
        if g.below(4) == 0 { return nil }
        var s = PrivacySignals()
        s.gdprApplies = [nil, true, false][g.below(3)]
        s.tcfConsent = consentStrings[g.below(consentStrings.count)]
        s.usPrivacy = ["", "1YNN", "1YYN", "1NYY", "1---"][g.below(5)]
        // GPP: none, a US national section (with gpp_sid, one that applies or not), or the TCF EU
        // v2 section alone or with US privacy v1, which stand for a missing tcf_consent/us_privacy.
        switch g.below(7) {
        case 0, 1: break
        case 2, 3:
            s.gppSectionIDs = [[7], [8]][g.below(2)]
            s.gpp = "DBABLA~BVVqAAEABgA.QA"
        case 4, 5:
            if g.below(2) == 0 { s.tcfConsent = "" }
            s.gpp = "DBABMA~" + consentStrings[g.below(consentStrings.count)]
        default:
            s.gpp = "DBACNY~" + consentStrings[g.below(consentStrings.count)] + "~" + ["1YNN", "1YYN"][g.below(2)]
            if g.below(2) == 0 { s.gppSectionIDs = [[2], [6], [2, 6]][g.below(3)] }
        }
        s.coppa = g.below(6) == 0
        s.limitAdTracking = g.below(4) == 0
        s.trackingAuthorization = [nil, .notDetermined, .restricted, .denied, .authorized][g.below(5)]
        return s
    }

    static let identifierPaths: [[String]] = [
        ["user", "id"], ["user", "buyeruid"], ["user", "eids"], ["user", "ext", "eids"], ["user", "geo"],
        ["user", "yob"],
        ["device", "ifa"], ["device", "ip"], ["device", "ipv6"], ["device", "dpidsha1"], ["device", "dpidmd5"],
        ["device", "didsha1"], ["device", "didmd5"], ["device", "macsha1"], ["device", "macmd5"], ["device", "geo"],
    ]

    static func value(_ json: JSONValue, _ path: [String]) -> JSONValue? {
        var current: JSONValue? = json
        for key in path { current = current?[key] }
        return current
    }

    /// Whether `json`'s regulation fields say exactly `terms`.
    static func saysExactly(_ terms: ConsentTerms, _ json: JSONValue) -> Bool {
        let regs = json["regs"]
        guard regs?["coppa"]?.integer == (terms.coppa ? 1 : 0), regs?["gdpr"]?.integer == (terms.gdpr ? 1 : 0),
            regs?["us_privacy"]?.string == (terms.usPrivacy.isEmpty ? nil : terms.usPrivacy),
            regs?["gpp"]?.string == (terms.gpp.isEmpty ? nil : terms.gpp),
            regs?["gpp_sid"]?.array?.compactMap(\.integer)
                == (terms.gpp.isEmpty ? nil : terms.gppSectionIDs.map(Int.init)),
            json["user"]?["consent"]?.string == (terms.gdpr ? terms.consentString : nil),
            json["device"]?["lmt"]?.integer == (terms.limitAdTracking || terms.coppa ? 1 : 0),
            json["source"]?["tid"]?.string?.isEmpty == false
        else { return false }
        return true
    }

    @Test func noAdCrossesAClassAndNoRequestCarriesAnIdentifierOrOtherTerms() throws {
        var lentAcrossClasses = 0
        var requestsWithIdentifier = 0
        var requestsWithOtherTerms = 0
        var wrongRefusals = 0
        var lent = 0
        var requests = 0
        var classesSeen: Set<String> = []
        for seed in 0..<Self.sequences {
            var g = SplitMix64Model(seed: UInt64(seed))
            let clock = ManualClock()
            let source = WritingSource()
            var configuration = LoaderConfiguration()
            configuration.source = "model"
            configuration.sizing = .fixed
            configuration.maximumRetainedAdvertisements = 3
            configuration.numberOfAdvertisements = 2
            configuration.lifetime = .seconds(600)
            configuration.consent = Self.policy
            let loader = try NativeAdvertisementLoader(
                loaders: [configuration], sources: ["model": source], clock: clock, scheduler: clock,
                idSeed: UInt64(seed))
            var open: [UInt64] = []
            for _ in 0..<Self.steps {
                switch g.below(10) {
                case 0...3:
                    let signals = Self.randomSignals(&g)
                    let expected = Self.policy.classify(signals)
                    do {
                        let outcome = try loader.borrow(
                            adUnitID: ["a", "b"][g.below(2)], privacy: signals, whenServed: { _ in })
                        guard case .consentClass(let index) = expected else {
                            wrongRefusals += 1
                            continue
                        }
                        if case .answered(.leased(let lease, _)) = outcome {
                            lent += 1
                            open.append(lease.id)
                            let bought = (lease.ad.sourceContext as? ClassContext)?.consentClass
                            if bought != Self.policy.classes[index].name { lentAcrossClasses += 1 }
                        }
                    } catch {
                        switch expected {
                        case .refused: if error.code != .failedPrecondition { wrongRefusals += 1 }
                        case .invalid: if error.code != .invalidArgument { wrongRefusals += 1 }
                        case .consentClass: wrongRefusals += 1
                        }
                    }
                case 4:
                    _ = try? loader.prefetch(adUnitID: "a", privacy: Self.randomSignals(&g))
                case 5, 6, 7:
                    guard !source.pending.isEmpty else { continue }
                    let pending = source.pending.remove(at: g.below(source.pending.count))
                    let fill = g.below(pending.count + 1)
                    pending.completion(
                        .success(
                            (0..<fill).map { n in
                                DeliveredAd(
                                    creative: .native(NativeAdContent(headline: "ad \(n)")),
                                    context: ClassContext(pending.request.consentClass))
                            }))
                case 8:
                    guard !open.isEmpty else { continue }
                    _ = try? loader.returnLease(open.remove(at: g.below(open.count)), shown: g.below(2) == 0)
                default:
                    clock.advance(by: .seconds(Int64(g.below(120))))
                }
            }
            for (request, json) in source.written {
                requests += 1
                classesSeen.insert(request.consentClass)
                if Self.identifierPaths.contains(where: { Self.value(json, $0) != nil }) { requestsWithIdentifier += 1 }
                let terms = Self.policy.classes.first { $0.name == request.consentClass }?.terms
                if terms == nil || !Self.saysExactly(terms!, json) { requestsWithOtherTerms += 1 }
            }
            loader.shutdown()
        }
        #expect(lentAcrossClasses == 0)
        #expect(requestsWithIdentifier == 0)
        #expect(requestsWithOtherTerms == 0)
        #expect(wrongRefusals == 0)
        // The sequences exercise what they check: many lends and requests, every class.
        #expect(lent > Self.sequences / 4)
        #expect(requests > Self.sequences)
        if Self.sequences >= 10_000 { #expect(classesSeen == Set(Self.policy.classes.map(\.name)), "\(classesSeen)") }
        print(
            "consent model: \(Self.sequences) sequences, \(lent) ads lent, \(requests) requests, classes \(classesSeen.sorted())"
        )
    }
}

struct SplitMix64Model {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
