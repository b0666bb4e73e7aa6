import AdLoaderCore
import Testing

/// Run-time control: invalidating a creative, disabling a loader, reconfiguring the loaders.
@Suite struct NativeAdvertisementLoaderControlTests {
    /// A harness whose ads alternate between creatives "c1" (odd ads) and "c0" (even ads).
    private func twoCreatives(
        _ configure: (inout LoaderConfiguration) -> Void = { _ in }
    ) throws -> Harness {
        let h = try Harness {
            $0.invalidationBlockTime = .seconds(600)
            configure(&$0)
        }
        h.source.creativeID = { "c\($0 % 2)" }
        return h
    }

    // MARK: Invalidation

    @Test func invalidatingDropsTheAdAndItsSiblingsAndBlocksTheCreativeUntilTheBlockTimePasses() throws {
        let h = try twoCreatives()
        try h.fill()
        #expect(h.stats().available == 10)
        let lease = try h.lease()
        #expect(lease.ad.creativeID == "c1")
        h.clearEvents()

        let outcome = try h.loader.invalidateLease(lease.id, shown: false, reason: "bad creative")

        #expect(outcome == .invalidated)
        let removed = h.events(.removed)
        #expect(removed.count == 5)
        #expect(removed.allSatisfy { $0.reason == .invalidated && $0.note == "bad creative" })
        #expect(removed.first?.adID == lease.ad.id)
        #expect(h.events(.returned).map(\.reason) == [nil])
        // The source hears of every unshown ad of the creative (OpenRTB: a loss notice).
        #expect(h.source.dropped.count == 5)
        #expect(h.source.dropped.allSatisfy { $0.reason == .invalidated && $0.ad.creativeID == "c1" })
        #expect(h.stats().available == 5)
        #expect(h.stats().removed == 5)
        #expect(h.stats().isBalanced)
        #expect(h.loader.loaderStates().map(\.blockedCreatives) == [1])

        // The top-up's ads of the blocked creative are dropped on arrival.
        #expect(h.source.pendingAds == 5)
        h.source.succeedAll()  // ads 11...15: c1, c0, c1, c0, c1
        #expect(h.stats().available == 7)
        #expect(h.source.dropped.count == 8)
        var lent: [String?] = []
        while case .leased(let next, _) = try h.borrow() { lent.append(next.ad.creativeID) }
        #expect(lent.count == 7)
        #expect(lent.allSatisfy { $0 == "c0" })

        // Once the block time has passed, the creative is lent again.
        h.clock.advance(by: .seconds(600))
        h.source.succeedAll()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeedAll()
        #expect(h.source.dropped.count(where: { $0.reason == .invalidated }) == 8)
        var after: Set<String?> = []
        while case .leased(let next, _) = try h.borrow() { after.insert(next.ad.creativeID) }
        #expect(after.contains("c1"))
    }

    @Test func theBlockEndsExactlyAtTheBlockTime() throws {
        let h = try twoCreatives()
        try h.fill()
        let lease = try h.lease()
        try h.loader.invalidateLease(lease.id, shown: false, reason: "bad creative")
        h.source.succeedAll()
        let probe = Ad(
            id: "x", adUnitID: "unit", loader: "default", creative: .native(NativeAdContent(headline: "x")),
            loadedAt: h.clock.now, expiresAt: h.clock.now + .seconds(60), creativeID: "c1")
        h.clock.advance(by: .milliseconds(599_999))
        #expect(h.loader.isCreativeBlocked(of: probe, in: "default"))
        h.clock.advance(by: .milliseconds(1))
        #expect(!h.loader.isCreativeBlocked(of: probe, in: "default"))
        #expect(h.loader.loaderStates().map(\.blockedCreatives) == [0])
    }

    @Test func anInvalidatedShownAdCountsItsShowAndGetsNoLossNotice() throws {
        let h = try twoCreatives { $0.showCountThreshold = 3 }
        try h.fill()
        let lease = try h.lease()
        #expect(try h.loader.invalidateLease(lease.id, shown: true, reason: "offensive") == .invalidated)
        #expect(h.source.shown.map(\.id) == [lease.ad.id])
        #expect(!h.source.dropped.contains { $0.ad.id == lease.ad.id })
        #expect(h.source.dropped.count == 4)
    }

    @Test func siblingsOutOnLeasesAreNeverLentAgainAndRemovedWhenReturned() throws {
        let h = try twoCreatives()
        try h.fill()
        let a = try h.lease(slot: "a")  // c1
        let b = try h.lease(slot: "b")  // c0
        let c = try h.lease(slot: "c")  // c1
        #expect([a, b, c].map(\.ad.creativeID) == ["c1", "c0", "c1"])
        try h.loader.invalidateLease(a.id, shown: false, reason: "bad creative")
        // Slot b keeps its ad; slot c gets another one instead of its blocked ad.
        guard case .leased(let b2, reused: true) = try h.borrow(slot: "b") else { throw TestFailure("b not reused") }
        #expect(b2.ad.id == b.ad.id)
        guard case .leased(let c2, reused: false) = try h.borrow(slot: "c") else { throw TestFailure("c reused") }
        #expect(c2.ad.creativeID == "c0")
        #expect(h.source.droppedIDs[c.ad.id] == .invalidated)
        // A lease of the creative returned normally: removed, not back in the pool.
        let h2 = try twoCreatives()
        try h2.fill()
        let x = try h2.lease(slot: "x")
        let y = try h2.lease(slot: "y")
        let z = try h2.lease(slot: "z")
        try h2.loader.invalidateLease(z.id, shown: false, reason: "bad")
        #expect(x.ad.creativeID == z.ad.creativeID)
        #expect(try h2.loader.returnLease(x.id, shown: false) == .removed)
        #expect(try h2.loader.returnLease(y.id, shown: false) == .backInPool)
        #expect(h2.stats().isBalanced)
    }

    @Test func withoutACreativeIDTheCreativeItselfIsTheKey() throws {
        let h = try Harness { $0.invalidationBlockTime = .seconds(60) }
        h.source.creative = { .native(NativeAdContent(headline: $0 <= 3 ? "same" : "other \($0)")) }
        try h.fill()
        let lease = try h.lease()
        try h.loader.invalidateLease(lease.id, shown: false, reason: "bad")
        #expect(h.events(.removed).count == 3)
        #expect(h.stats().available == 7)
    }

    @Test func atTheCapTheBlockEndingSoonestIsLifted() throws {
        let h = try Harness {
            $0.invalidationBlockTime = .seconds(600)
            $0.maximumBlockedCreatives = 2
        }
        h.source.creativeID = { "c\($0)" }
        try h.fill()
        for _ in 0..<3 {
            let lease = try h.lease()
            try h.loader.invalidateLease(lease.id, shown: false, reason: "bad")
            h.clock.advance(by: .seconds(1))
        }
        #expect(h.loader.loaderStates().map(\.blockedCreatives) == [2])
        func blocked(_ id: String) -> Bool {
            h.loader.isCreativeBlocked(
                of: Ad(
                    id: "p", adUnitID: "unit", loader: "default", creative: .native(NativeAdContent(headline: "p")),
                    loadedAt: h.clock.now, expiresAt: h.clock.now, creativeID: id), in: "default")
        }
        #expect(!blocked("c1"))
        #expect(blocked("c2"))
        #expect(blocked("c3"))
    }

    @Test func aZeroBlockTimeRemovesTheCreativeButBlocksNothingLater() throws {
        let h = try twoCreatives { $0.invalidationBlockTime = .zero }
        try h.fill()
        let lease = try h.lease()
        try h.loader.invalidateLease(lease.id, shown: false, reason: "bad")
        #expect(h.stats().available == 5)
        h.source.succeedAll()
        #expect(h.stats().available == 10)
        #expect(h.loader.loaderStates().map(\.blockedCreatives) == [0])
    }

    @Test func invalidatingAnUnknownOrEndedLeaseIsNotFoundAndChangesNothing() throws {
        let h = try twoCreatives()
        try h.fill()
        let lease = try h.lease()
        #expect(try h.loader.returnLease(lease.id, shown: false) == .backInPool)
        #expect(throws: LoaderError.self) { try h.loader.invalidateLease(lease.id, shown: false, reason: "bad") }
        #expect(throws: LoaderError.self) { try h.loader.invalidateLease(12345, shown: false, reason: "bad") }
        #expect(h.stats().available == 10)
        #expect(h.loader.loaderStates().map(\.blockedCreatives) == [0])
    }

    // MARK: Disable and enable

    @Test func disablingAndEnablingAreAnnouncedAndShownInTheLoaderStates() throws {
        let h = try Harness()
        try h.fill()
        try h.loader.setEnabled(false, loader: "default")
        #expect(h.loader.loaderStates().map(\.enabled) == [false])
        #expect(h.events(.loaderChanged).map(\.reason) == [.disabled])
        #expect(h.stats().available == 0)
        #expect(throws: LoaderError.self) { try h.borrow() }
        try h.loader.setEnabled(false, loader: "default")  // no change, no event
        try h.loader.setEnabled(true, loader: "default")
        #expect(h.events(.loaderChanged).map(\.reason) == [.disabled, .enabled])
        #expect(h.events(.loaderChanged).allSatisfy { $0.adUnitID.isEmpty && $0.loader == "default" })
        try h.fill()
        #expect(h.stats().available == 10)
        #expect(throws: LoaderError.self) { try h.loader.setEnabled(true, loader: "nope") }
    }

    // MARK: Reconfiguration

    @Test func aChangeOfSizingOrTimeoutsKeepsThePoolsAndTheLeases() throws {
        let h = try Harness()
        try h.fill()
        let lease = try h.lease()
        var changed = h.configuration
        changed.leaseTimeout = .seconds(100)
        changed.maximumRetainedAdvertisements = 20
        let result = try h.loader.reconfigure(loaders: [changed])
        #expect(result.changedKeepingPools == ["default"])
        #expect(h.stats().available == 9)
        #expect(h.stats().leased == 1)
        #expect(try h.loader.returnLease(lease.id, shown: false) == .backInPool)
        #expect(h.loader.configuration(named: "default")?.leaseTimeout == .seconds(100))
        // The new settings apply: the pool tops up to its new size, leases end by the new timeout.
        let next = try h.lease()
        #expect(next.expiresAt == h.clock.now + .seconds(100))
        #expect(h.source.pendingAds == 10)
    }

    @Test func addingAndRemovingLoadersLeavesAnUnchangedLoadersPoolIntact() throws {
        let h = try Harness()
        try h.fill()
        let lease = try h.lease()
        let before = h.stats()
        var second = LoaderConfiguration.classic(name: "second")
        second.source = "fake"
        let added = try h.loader.reconfigure(loaders: [h.configuration, second])
        #expect(added.added == ["second"])
        #expect(added.unchanged == ["default"])
        #expect(h.stats() == before)
        try h.loader.prefetch(adUnitID: "unit", loader: "second")
        #expect(h.events(.loaderChanged).map(\.reason) == [.added])

        let removed = try h.loader.reconfigure(loaders: [h.configuration])
        #expect(removed.removed == ["second"])
        #expect(h.stats() == before)
        #expect(try h.loader.returnLease(lease.id, shown: false) == .backInPool)
        #expect(throws: LoaderError.self) { try h.loader.prefetch(adUnitID: "unit", loader: "second") }
        // The removed loader's requests in flight are dropped when they arrive.
        h.source.succeedAll()
        #expect(h.source.dropped.allSatisfy { $0.reason == .reconfigured })
        #expect(h.source.dropped.count == 10)
    }

    @Test func removingALoaderDropsItsAdsAndEndsItsLeasesWhenReturned() throws {
        let h = try Harness()
        try h.fill()
        let lease = try h.lease()
        var other = LoaderConfiguration.classic(name: "other")
        other.source = "fake"
        h.clearEvents()
        let result = try h.loader.reconfigure(loaders: [other])
        #expect(result.removed == ["default"])
        #expect(result.added == ["other"])
        #expect(h.events(.removed).count == 9)
        #expect(h.events(.removed).allSatisfy { $0.reason == .reconfigured })
        #expect(h.loader.stats(loader: "default").isEmpty)
        #expect(try h.loader.returnLease(lease.id, shown: true) == .removed)
        #expect(h.source.shown.map(\.id) == [lease.ad.id])
        #expect(throws: LoaderError.self) { try h.borrow() }
    }

    @Test func aChangeOfRequestDropsThePools() throws {
        let h = try Harness()
        try h.fill()
        let lease = try h.lease()
        var changed = h.configuration
        changed.keywords = ["sports"]
        let result = try h.loader.reconfigure(loaders: [changed])
        #expect(result.changedDroppingPools == ["default"])
        #expect(h.loader.stats().isEmpty)
        #expect(try h.loader.returnLease(lease.id, shown: false) == .removed)
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.last?.request.keywords == ["sports"])
    }

    @Test func anInvalidConfigurationIsRefusedAndChangesNothing() throws {
        let h = try Harness()
        try h.fill()
        let before = h.stats()
        var bad = h.configuration
        bad.numberOfAdvertisements = 9
        #expect(throws: ConfigError.self) { try h.loader.reconfigure(loaders: [bad]) }
        var unknown = LoaderConfiguration.classic(name: "x")
        unknown.source = "nowhere"
        #expect(throws: ConfigError.self) { try h.loader.reconfigure(loaders: [h.configuration, unknown]) }
        #expect(throws: ConfigError.self) { try h.loader.reconfigure(loaders: [h.configuration, h.configuration]) }
        #expect(throws: ConfigError.self) { try h.loader.reconfigure(loaders: []) }
        #expect(h.stats() == before)
        #expect(h.loader.loaderStates().map(\.name) == ["default"])
        #expect(h.events(.loaderChanged).isEmpty)
    }

    @Test func aRunTimeDisableSurvivesAReloadThatLeavesEnabledAsItWas() throws {
        let h = try Harness()
        try h.loader.setEnabled(false, loader: "default")
        var changed = h.configuration
        changed.leaseTimeout = .seconds(30)
        try h.loader.reconfigure(loaders: [changed])
        #expect(h.loader.loaderStates().map(\.enabled) == [false])
        var disabledInFile = changed
        disabledInFile.enabled = false
        try h.loader.reconfigure(loaders: [disabledInFile])
        #expect(h.loader.loaderStates().map(\.enabled) == [false])
        try h.loader.reconfigure(loaders: [changed])  // the file enables it again
        #expect(h.loader.loaderStates().map(\.enabled) == [true])
        try h.fill()
        #expect(h.stats().available == 10)
    }
}
