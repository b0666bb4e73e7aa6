import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// Consent classes in the pool key: an ad bought for one class is never lent to a borrower of
/// another, each class's requests carry its terms, and signals that allow no auction are refused.
struct NativeAdvertisementLoaderConsentTests {
    static let euString = TCFConsent(purposesConsent: [1, 2], vendorConsents: [10]).encoded
    static let euUser = PrivacySignals(
        gdprApplies: true, tcfConsent: TCFConsent(purposesConsent: [1, 2, 3], vendorConsents: [10, 11]).encoded)

    static func harness() throws -> Harness {
        try Harness {
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
            $0.consent.classes.append(
                ConsentClass(name: "eu", terms: ConsentTerms(gdpr: true, consentString: euString)))
        }
    }

    func borrow(_ h: Harness, _ privacy: PrivacySignals?) throws(LoaderError) -> BorrowResult {
        try h.loader.borrow(adUnitID: "unit", privacy: privacy, whenServed: BorrowOutcome.neverServed).answer!
    }

    @Test func eachClassHasItsOwnPoolAndRequestsWithItsTerms() throws {
        let h = try Self.harness()
        try h.loader.prefetch(adUnitID: "unit")
        try h.loader.prefetch(adUnitID: "unit", privacy: PrivacySignals(coppa: true))
        try h.loader.prefetch(adUnitID: "unit", privacy: Self.euUser)
        let classes = h.source.requests.map(\.request.consentClass)
        #expect(Set(classes) == ["default", "coppa", "eu"])
        for (request, _) in h.source.requests {
            switch request.consentClass {
            case "coppa": #expect(request.consent.coppa && request.consent.limitAdTracking)
            case "eu": #expect(request.consent.gdpr && request.consent.consentString == Self.euString)
            default: #expect(request.consent == ConsentTerms())
            }
        }
        let stats = h.loader.stats(adUnitID: "unit")
        #expect(stats.map(\.consentClass) == ["coppa", "default", "eu"])
    }

    @Test func anAdOfOneClassIsNeverLentToAnother() throws {
        let h = try Self.harness()
        // Only the default class's pool gets ads.
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeedAll()
        #expect(h.stats().available == 2)
        #expect(try borrow(h, PrivacySignals(coppa: true)) == .noAdYet)
        #expect(try borrow(h, Self.euUser) == .noAdYet)
        #expect(try borrow(h, PrivacySignals(limitAdTracking: true)) == .noAdYet)
        guard case .leased(let lease, _) = try borrow(h, PrivacySignals()) else {
            throw TestFailure("default not lent")
        }
        #expect(lease.ad.id.isEmpty == false)
        // The coppa borrow asked for coppa ads; answered, they go to coppa borrowers only.
        let coppaRequests = h.source.pending.indices.filter { h.source.pending[$0].request.consentClass == "coppa" }
        #expect(!coppaRequests.isEmpty)
    }

    @Test func signalsThatAllowNoAuctionAreRefusedNamingTheRule() throws {
        let h = try Self.harness()
        let noPurposeTwo = PrivacySignals(gdprApplies: true, tcfConsent: TCFConsent(purposesConsent: [1]).encoded)
        #expect {
            _ = try borrow(h, noPurposeTwo)
        } throws: { error in
            guard let error = error as? LoaderError else { return false }
            return error.code == .failedPrecondition
                && error.message.contains("loaders.default.consent.requiredPurposes")
        }
        #expect {
            _ = try borrow(h, PrivacySignals(gdprApplies: true, tcfConsent: "garbage!"))
        } throws: {
            ($0 as? LoaderError)?.code == .invalidArgument && ($0 as? LoaderError)?.field == "privacy.tcf_consent"
        }
        #expect(throws: LoaderError.self) {
            try h.loader.prefetch(adUnitID: "unit", privacy: noPurposeTwo)
        }
        // Nothing was asked upstream for the refused calls.
        #expect(h.source.requests.isEmpty)
    }

    @Test func aPoolPerClassCountsAgainstMaximumPools() throws {
        let h = try Harness {
            $0.maximumPools = 2
            $0.numberOfAdvertisements = 1
            $0.maximumRetainedAdvertisements = 1
        }
        try h.loader.prefetch(adUnitID: "unit")
        try h.loader.prefetch(adUnitID: "unit", privacy: PrivacySignals(coppa: true))
        #expect(throws: LoaderError.self) {
            try h.loader.prefetch(adUnitID: "unit", privacy: PrivacySignals(limitAdTracking: true))
        }
    }
}
