import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// The source hears what became of its ads: every show, and every ad dropped unshown with
/// its reason, each with the context it delivered the ad with.
struct NativeAdvertisementLoaderNoticeTests {
    static func number(_ ad: Ad) -> Int? { (ad.sourceContext as? TestContext)?.number }

    @Test func theContextTravelsWithTheAdAndComesBackInNotices() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
        }
        try h.fill()
        let lease = try h.lease()
        #expect(Self.number(lease.ad) == 1)
        try h.loader.returnLease(lease.id, shown: true)
        #expect(h.source.shown.count == 1)
        #expect(h.source.shown.first?.sourceContext === lease.ad.sourceContext)
        #expect(h.source.shown.first?.id == lease.ad.id)
    }

    @Test func everyShownReturnIsNoticedWithItsShowCount() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
            $0.showCountThreshold = 3
        }
        try h.fill()
        var outcomes: [ReturnOutcome] = []
        for shown in [true, false, true, true] {
            let lease = try h.lease()
            outcomes.append(try h.loader.returnLease(lease.id, shown: shown))
        }
        #expect(outcomes == [.backInPool, .backInPool, .backInPool, .consumed])
        // Three shows of one ad, the first with showCount 1; the unshown return says nothing.
        #expect(h.source.shown.map(\.showCount) == [1, 2, 3])
        #expect(Set(h.source.shown.map(\.id)).count == 1)
        // Consumed: shown, so never reported dropped.
        #expect(h.source.dropped.isEmpty)
    }

    @Test func aReclaimedLeaseIsNotAShow() throws {
        let h = try Harness { $0.leaseTimeout = .seconds(10) }
        try h.fill()
        _ = try h.lease()
        h.clock.advance(by: .seconds(10))
        #expect(h.stats().leasesReclaimed == 1)
        #expect(h.source.shown.isEmpty)
        #expect(h.source.dropped.isEmpty)
    }

    @Test func adsExpiringUnshownAreReportedDroppedOnce() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 4
            $0.numberOfAdvertisements = 4
            $0.lifetime = .seconds(100)
            $0.sweepInterval = .seconds(10)
            $0.showCountThreshold = 2
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, fill: 3)
        // One more arrives already expired.
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, fill: 1, sourceExpiry: h.clock.now)
        #expect(h.source.droppedIDs.values.map { $0 } == [.expired])
        let heldPastExpiry = try h.lease(slot: "s")
        let shownOnce = try h.lease()
        try h.loader.returnLease(shownOnce.id, shown: true)  // shown, not consumed (threshold 2)
        #expect(heldPastExpiry.ad.id != shownOnce.ad.id)
        h.clock.advance(by: .seconds(100))
        // The sweep expired the two available ads; only the one never shown is a drop notice.
        // The leased one expired when its lease ended unshown: a lease never outlives its ad,
        // so it ended (reclaimed) at the ad's expiry.
        #expect(h.stats().expired == 4)
        #expect(h.stats().leasesReclaimed == 1)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(heldPastExpiry.id, shown: false) }
        let reported = h.source.droppedIDs
        #expect(h.source.dropped.count == 3)
        #expect(reported.count == 3)
        #expect(reported.values.allSatisfy { $0 == .expired })
        #expect(reported[shownOnce.ad.id] == nil)
        #expect(reported[heldPastExpiry.ad.id] == .expired)
        #expect(h.source.dropped.allSatisfy { $0.ad.showCount == 0 && Self.number($0.ad) != nil })
    }

    @Test func disablingReportsAvailableAdsAtOnceAndLeasedOnesWhenTheirLeaseEnds() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 3
        }
        try h.fill()
        let lease = try h.lease()
        try h.loader.setEnabled(false, loader: "default")
        #expect(h.source.dropped.map(\.reason) == [.disabled, .disabled])
        #expect(!h.source.dropped.contains { $0.ad.id == lease.ad.id })
        #expect(try h.loader.returnLease(lease.id, shown: false) == .removed)
        #expect(h.source.dropped.count == 3)
        #expect(h.source.dropped.last?.ad.id == lease.ad.id)
        #expect(h.source.dropped.last?.reason == .disabled)
        #expect(h.source.dropped.last?.ad.sourceContext === lease.ad.sourceContext)
    }

    @Test func aShownReturnOfADroppedAdIsAShowNotADrop() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        try h.fill()
        let lease = try h.lease()
        try h.loader.setEnabled(false, loader: "default")
        #expect(try h.loader.returnLease(lease.id, shown: true) == .removed)
        #expect(h.source.shown.map(\.id) == [lease.ad.id])
        #expect(h.source.dropped.isEmpty)
    }

    @Test func shutdownReportsEveryUnshownAd() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 3
        }
        try h.fill()
        let shown = try h.lease()
        try h.loader.returnLease(shown.id, shown: true)  // consumed
        _ = try h.lease()
        try h.loader.prefetch(adUnitID: "unit")  // asks for the consumed ad's replacement
        #expect(h.source.pendingAds == 1)
        h.loader.shutdown()
        // The available ad and the leased one; the consumed one was shown.
        #expect(h.source.dropped.count == 2)
        #expect(h.source.dropped.allSatisfy { $0.reason == .shutdown })
        #expect(h.source.droppedIDs[shown.ad.id] == nil)
        // Ads arriving after shutdown are dropped unshown too.
        h.source.succeedAll()
        #expect(h.source.dropped.count == 3)
        #expect(h.source.dropped.allSatisfy { $0.reason == .shutdown })
    }

    @Test func anInvalidatedAdIsReportedWithItsReason() throws {
        // The fake source sends native assets, which a rewarded loader cannot serve.
        let h = try Harness {
            $0.format = .rewarded
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        try h.fill()
        #expect(h.source.dropped.map(\.reason) == [.invalidated])
        #expect(Self.number(h.source.dropped[0].ad) == 1)
    }

    /// A source implementing only `loadAds` gets the no-op notices.
    @Test func aSourceWithoutNoticesNeedsNothing() throws {
        final class Quiet: DemandSource {
            var completions: [(Result<[DeliveredAd], UpstreamError>) -> Void] = []
            func loadAds(
                _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) { completions.append(completion) }
        }
        let clock = ManualClock()
        let source = Quiet()
        var configuration = LoaderConfiguration.classic()
        configuration.source = "quiet"
        configuration.maximumRetainedAdvertisements = 1
        configuration.numberOfAdvertisements = 1
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["quiet": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u")
        source.completions[0](.success([DeliveredAd(creative: .native(NativeAdContent(headline: "q")))]))
        guard case .answered(.leased(let lease, _)) = try loader.borrow(adUnitID: "u", whenServed: { _ in }) else {
            throw TestFailure("no lease")
        }
        #expect(lease.ad.sourceContext == nil)
        #expect(try loader.returnLease(lease.id, shown: true) == .consumed)
        loader.shutdown()
        #expect(loader.stats()[0].isBalanced)
    }
}
