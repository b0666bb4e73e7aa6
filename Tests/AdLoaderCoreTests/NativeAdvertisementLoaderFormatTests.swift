import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// A loader's format: what its source is asked for and which creatives it keeps; pools,
/// leases and expiry work the same for every format.
struct NativeAdvertisementLoaderFormatTests {
    static func fullScreen(_ n: Int) -> AdCreative {
        .fullScreen(
            FullScreenCreative(
                media: .markup("<p>ad \(n)</p>"), orientation: .portrait, width: 1080, height: 1920,
                reward: FullScreenCreative.Reward(type: "coins", amount: n)))
    }

    @Test func theFormatDefaultsToNativeAndGoesUpstreamWithTheRequest() throws {
        #expect(LoaderConfiguration().format == .native)
        #expect(LoaderConfiguration().request(adUnitID: "u").format == .native)
        let h = try Harness { $0.format = .rewarded }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.allSatisfy { $0.request.format == .rewarded })
        #expect(h.source.requests.map(\.request.adUnitID) == ["unit", "unit"])
    }

    @Test(arguments: [AdFormat.interstitial, .rewarded, .appOpen])
    func aFullScreenFormatNeedsShowCountThresholdOne(format: AdFormat) throws {
        var configuration = LoaderConfiguration.classic(name: "fs")
        configuration.format = format
        try configuration.validate()
        configuration.showCountThreshold = 2
        #expect(
            throws: ConfigError(
                field: "loaders.fs.showCountThreshold",
                message: "must be 1 for format \(format.name) (a full-screen ad is shown once), got 2")
        ) { try configuration.validate() }
        configuration.format = .native
        try configuration.validate()
    }

    @Test func fullScreenAdsArePooledLentConsumedAndExpiredLikeNativeOnes() throws {
        let h = try Harness {
            $0.format = .interstitial
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 3
            $0.lifetime = .seconds(100)
        }
        h.source.creative = Self.fullScreen
        try h.fill()
        #expect(h.stats().available == 3)
        let first = try h.lease(slot: "level-end")
        #expect(first.ad.creative == Self.fullScreen(1))
        // Same slot, same lease; shown once: consumed.
        guard case .leased(let again, reused: true) = try h.borrow(slot: "level-end") else {
            throw TestFailure("slot lost its lease")
        }
        #expect(again.id == first.id)
        #expect(try h.loader.returnLease(first.id, shown: true) == .consumed)
        // Unshown: back in the pool; then the lifetime ends, and the next sweep expires them.
        let second = try h.lease()
        #expect(try h.loader.returnLease(second.id, shown: false) == .backInPool)
        h.clock.advance(by: h.loader.configurations["default"]!.sweepInterval * 2)
        let stats = h.stats()
        #expect(stats.consumed == 1)
        #expect(stats.expired == 2)
        #expect(stats.isBalanced)
    }

    @Test func aCreativeThatDoesNotFitTheFormatIsDroppedAsInvalidated() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 4
            $0.numberOfAdvertisements = 4
        }
        // A native loader's source sends two full-screen creatives among native ones.
        h.source.creative = {
            $0.isMultiple(of: 2) ? Self.fullScreen($0) : .native(NativeAdContent(headline: "ad \($0)"))
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.clearEvents()
        h.source.succeedAll()
        let stats = h.stats()
        #expect(stats.loaded == 4)
        #expect(stats.available == 2)
        #expect(stats.removed == 2)
        #expect(stats.isBalanced)
        let removed = h.events(.removed)
        #expect(removed.map(\.reason) == [.invalidated, .invalidated])
        #expect(h.events(.received).count == 4)
        // Only native ads are lent.
        for _ in 0..<2 {
            let lease = try h.lease()
            #expect(lease.ad.creative.nativeContent != nil)
        }
        #expect(try h.borrow() == .noAdYet)
    }

    /// A rewarded ad is a video or markup creative, never native assets (an interstitial or
    /// app-open loader keeps native ones: ``aNativeCreativeServesAnAppOpenLoader()``).
    @Test func aRewardedLoaderDropsNativeCreatives() throws {
        let h = try Harness {
            $0.format = .rewarded
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
        }
        try h.fill()  // the fake source sends native ads
        #expect(h.stats().available == 0)
        #expect(h.stats().removed == 2)
        #expect(h.events(.removed).allSatisfy { $0.reason == .invalidated })
    }

    @Test func aNativeCreativeServesAnAppOpenLoader() throws {
        let h = try Harness {
            $0.format = .appOpen
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
        }
        try h.fill()
        #expect(h.stats().available == 2 && h.stats().removed == 0)
        guard case .leased(let lease, _) = try h.borrow() else {
            Issue.record("no lease")
            return
        }
        #expect(lease.ad.format == .appOpen && lease.ad.creative.nativeContent != nil)
    }
}
