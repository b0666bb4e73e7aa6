import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct NativeAdvertisementLoaderTests {
    // MARK: init

    @Test func initRejectsAnInvalidConfiguration() {
        var configuration = LoaderConfiguration.classic()
        configuration.source = "fake"
        configuration.numberOfAdvertisements = 6
        let clock = ManualClock()
        #expect(throws: ConfigError(field: "loaders.default.numberOfAdvertisements", message: "must be 1...5, got 6")) {
            try NativeAdvertisementLoader(
                loaders: [configuration], sources: ["fake": FakeDemandSource()], clock: clock, scheduler: clock)
        }
    }

    @Test func initRejectsDuplicateNamesAndMissingSources() throws {
        let clock = ManualClock()
        var a = LoaderConfiguration.classic(name: "a")
        a.source = "fake"
        do {
            _ = try NativeAdvertisementLoader(
                loaders: [a, a], sources: ["fake": FakeDemandSource()], clock: clock, scheduler: clock)
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.field == "loaders.a.name")
        }
        var b = LoaderConfiguration.classic(name: "b")
        b.source = "nowhere"
        do {
            _ = try NativeAdvertisementLoader(
                loaders: [a, b], sources: ["fake": FakeDemandSource()], clock: clock, scheduler: clock)
            Issue.record("missing source accepted")
        } catch {
            #expect(error.field == "loaders.b.source")
        }
        let loader = try NativeAdvertisementLoader(
            loaders: [a], sources: ["fake": FakeDemandSource()], clock: clock, scheduler: clock)
        #expect(Array(loader.configurations.keys) == ["a"])
    }

    // MARK: prefetch

    @Test func prefetchRequestsMissingAdsInBatches() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 12
            $0.numberOfAdvertisements = 5
        }
        let result = try h.loader.prefetch(adUnitID: "unit")
        #expect(result == PrefetchResult(available: 0, inFlight: 12, requested: 12))
        #expect(h.source.requests.map(\.count) == [5, 5, 2])
        #expect(h.source.requests.allSatisfy { $0.request.adUnitID == "unit" })
        // Enough coming: a no-op.
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        #expect(h.source.requests.count == 3)
    }

    @Test func prefetchCountsLoadedLeasedAndInFlight() throws {
        let h = try Harness { $0.maximumRetainedAdvertisements = 12 }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed()  // 5 loaded, 7 in flight
        _ = try h.lease()  // 4 available, 1 leased (the borrow's top-up finds nothing missing)
        #expect(h.source.requests.count == 3)
        h.source.succeed(0, fill: 2)  // partial fill frees 3
        let stats = h.stats()
        #expect(stats.inFlight == 2)
        #expect(stats.available == 6)
        let result = try h.loader.prefetch(adUnitID: "unit")
        #expect(result.requested == 3)
        #expect(h.source.requests.last?.count == 3)
        #expect(h.stats().inFlight == 5)
    }

    @Test func prefetchValidates() throws {
        let h = try Harness()
        #expect(throws: LoaderError.self) { try h.loader.prefetch(adUnitID: "") }
        do {
            try h.loader.prefetch(adUnitID: "")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.field == "ad_unit_id")
        }
        do {
            try h.loader.prefetch(adUnitID: "unit", loader: "nope")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.field == "loader")
        }
        #expect(h.source.requests.isEmpty)
    }

    // MARK: pools

    @Test func poolsAreKeyedByLoaderAndAdUnit() throws {
        let clock = ManualClock()
        let source = FakeDemandSource()
        var a = LoaderConfiguration.classic(name: "a")
        a.source = "fake"
        a.keywords = ["sports"]
        a.maximumRetainedAdvertisements = 2
        var b = a
        b.name = "b"
        b.keywords = ["news"]
        let loader = try NativeAdvertisementLoader(
            loaders: [a, b], sources: ["fake": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u", loader: "a")
        source.succeedAll()
        #expect(source.requests.map(\.request.keywords) == [["sports"]])
        var answer = try loader.borrow(adUnitID: "u", loader: "b", whenServed: BorrowOutcome.neverServed).answer
        #expect(answer == .noAdYet)
        answer = try loader.borrow(adUnitID: "other", loader: "a", whenServed: BorrowOutcome.neverServed).answer
        #expect(answer == .noAdYet)
        answer = try loader.borrow(adUnitID: "u", loader: "a", whenServed: BorrowOutcome.neverServed).answer
        guard case .leased(let lease, _)? = answer else { throw TestFailure("no lease") }
        #expect(lease.ad.loader == "a")
        #expect(lease.ad.adUnitID == "u")
        #expect(loader.stats().map { "\($0.loader)/\($0.adUnitID)" } == ["a/other", "a/u", "b/u"])
        #expect(loader.stats(loader: "a", adUnitID: "u").count == 1)
    }

    @Test(arguments: [0, -1, 1_000_001])
    func maximumPoolsOutOfRangeIsRejectedByName(value: Int) {
        var configuration = LoaderConfiguration.classic(name: "feed")
        configuration.maximumPools = value
        #expect(throws: ConfigError(field: "loaders.feed.maximumPools", message: "must be 1...1000000, got \(value)")) {
            try configuration.validate()
        }
    }

    @Test func maximumPoolsDefaultsTo1000AndAcceptsItsBounds() throws {
        var configuration = LoaderConfiguration.classic()
        #expect(configuration.maximumPools == 1_000)
        for value in [1, 1_000_000] {
            configuration.maximumPools = value
            try configuration.validate()
        }
    }

    @Test func atThePoolCapANewAdUnitIsRefusedAndNothingIsAskedUpstream() throws {
        let h = try Harness {
            $0.maximumPools = 2
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 1
        }
        // Stats of ad units without a pool list nothing and create none.
        #expect(h.loader.stats(adUnitID: "a").isEmpty)
        #expect(h.loader.stats(loader: "default", adUnitID: "b").isEmpty)
        try h.fill("a")
        #expect(h.source.requests.count == 3)
        #expect(try h.borrow("b") == .noAdYet)  // a borrow creates the second pool
        h.source.succeedAll()
        let requestsBefore = h.source.requests.count
        let statsBefore = h.loader.stats()
        h.clearEvents()
        let expected = LoaderError(
            code: .resourceExhausted,
            message: "pools: limit of 2 ad units reached for loader \"default\" (loaders.default.maximumPools)")
        #expect(throws: expected) { try h.loader.prefetch(adUnitID: "c") }
        var answered = false
        #expect(throws: expected) { _ = try h.loader.borrow(adUnitID: "c") { _ in answered = true } }
        #expect(throws: expected) {
            _ = try h.loader.borrow(adUnitID: "c", slot: "s", wait: .seconds(5)) { _ in answered = true }
        }
        h.clock.advance(by: .seconds(10))
        #expect(!answered)
        #expect(h.source.requests.count == requestsBefore)
        #expect(h.events.isEmpty)
        #expect(h.loader.stats() == statsBefore)
        #expect(h.loader.stats(adUnitID: "c").isEmpty)
        // Existing pools keep lending, refilling and prefetching.
        let lease = try h.lease("a")
        #expect(try h.loader.returnLease(lease.id, shown: true) == .consumed)
        #expect(h.source.requests.count == requestsBefore + 1)
        h.source.succeedAll()
        #expect(try h.loader.prefetch(adUnitID: "b").requested == 0)
        #expect(try h.lease("b").ad.adUnitID == "b")
        #expect(h.loader.stats().map(\.adUnitID) == ["a", "b"])
        #expect(h.loader.stats().allSatisfy { $0.isBalanced })
    }

    @Test func thePoolCapIsPerLoaderAndAnInvalidCallIsRefusedFirst() throws {
        let clock = ManualClock()
        let source = FakeDemandSource()
        var a = LoaderConfiguration.classic(name: "a")
        a.source = "fake"
        a.maximumPools = 1
        var b = a
        b.name = "b"
        let loader = try NativeAdvertisementLoader(
            loaders: [a, b], sources: ["fake": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u", loader: "a")
        try loader.prefetch(adUnitID: "v", loader: "b")
        #expect(throws: LoaderError.self) { try loader.prefetch(adUnitID: "v", loader: "a") }
        do {
            try loader.prefetch(adUnitID: "u", loader: "b")
            Issue.record("over the cap")
        } catch {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.contains("loaders.b.maximumPools"))
        }
        // Bad arguments are still named as such at the cap.
        do {
            _ = try loader.borrow(adUnitID: "w", loader: "a", wait: .seconds(31)) { _ in }
            Issue.record("wait accepted")
        } catch {
            #expect(error.code == .invalidArgument && error.field == "wait_ms")
        }
        #expect(loader.stats().map { "\($0.loader)/\($0.adUnitID)" } == ["a/u", "b/v"])
        #expect(LoaderError.Code.resourceExhausted.description == "resource exhausted")
    }

    // MARK: observers

    @Test func observersSeeEventsUntilRemoved() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
        }
        var seen: [AdEvent.Kind] = []
        let token = h.loader.addObserver { seen.append($0.kind) }
        try h.fill()
        #expect(seen == [.received, .received, .loadFinished])
        let finished = h.events(.loadFinished)
        #expect(finished.first?.count == 2)
        #expect(finished.first?.error == nil)
        h.loader.removeObserver(token)
        _ = try h.lease()
        #expect(seen.count == 3)
        #expect(h.events(.leased).count == 1)
    }

    @Test func eventsCarryTheirFields() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        var second: [AdEvent] = []
        _ = h.loader.addObserver { second.append($0) }
        try h.loader.prefetch(adUnitID: "unit")
        let failedAt = h.clock.now
        h.source.fail(0, .final)
        // Every path waits out the retry delay after a failure: the next prefetch after it.
        h.clock.advance(by: h.configuration.retry.delay)
        try h.fill()
        let lease = try h.lease(slot: "cell")
        try h.loader.returnLease(lease.id, shown: true)
        #expect(h.events.map(\.kind) == [.loadFinished, .received, .loadFinished, .leased, .returned, .removed])
        #expect(second == h.events)
        #expect(h.events[0].error?.code == .final)
        #expect(h.events[0].count == 0)
        #expect(h.events[1].adID == lease.ad.id)
        let leased = h.events[3]
        #expect(leased.leaseID == lease.id && leased.slot == "cell" && leased.adID == lease.ad.id)
        let returned = h.events[4]
        #expect(returned.leaseID == lease.id && returned.shown && returned.reason == nil)
        #expect(h.events[5].reason == .consumed)
        #expect(h.events.allSatisfy { $0.loader == "default" && $0.adUnitID == "unit" })
        #expect(h.events[0].at == failedAt)
        #expect(h.events.dropFirst().allSatisfy { $0.at == h.clock.now })
    }

    // MARK: enable / disable / shutdown

    @Test func disablingDropsAdsEndsParkedBorrowsAndStopsFilling() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 4
            $0.numberOfAdvertisements = 2
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed()  // 2 available, 2 in flight
        let lease = try h.lease()
        var parked: BorrowResult?
        #expect(try h.loader.borrow(adUnitID: "other", wait: .seconds(5)) { parked = $0 }.parked != nil)
        h.clearEvents()
        try h.loader.setEnabled(false, loader: "default")
        #expect(parked == .unavailable)
        #expect(h.events(.removed).map(\.reason) == [.disabled])
        #expect(h.loader.configurations["default"]?.enabled == false)
        #expect(throws: LoaderError.self) { try h.loader.prefetch(adUnitID: "unit") }
        do { _ = try h.borrow() } catch { #expect(error.code == .unavailable) }
        // Ads arriving for requests in flight are dropped.
        let requestsBefore = h.source.requests.count
        h.source.succeedAll()
        #expect(h.stats().available == 0)
        #expect(h.events(.removed).count >= 2)
        // The leased ad is removed when its lease ends.
        #expect(try h.loader.returnLease(lease.id, shown: false) == .removed)
        let stats = h.stats()
        #expect(stats.isBalanced)
        #expect(stats.removed == stats.loaded)
        h.clock.advance(by: .seconds(4000))
        #expect(h.source.requests.count == requestsBefore)
        try h.loader.setEnabled(true, loader: "default")
        try h.fill()
        #expect(h.stats().available == 4)
        #expect(throws: LoaderError.self) { try h.loader.setEnabled(true, loader: "nope") }
    }

    @Test func aLoaderConfiguredDisabledLoadsNothingUntilEnabled() throws {
        let h = try Harness { $0.enabled = false }
        do { _ = try h.borrow() } catch { #expect(error.code == .unavailable) }
        #expect(h.source.requests.isEmpty)
        try h.loader.setEnabled(true, loader: "default")
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 10)
    }

    @Test func shutdownEndsEverythingAndRefusesLaterCalls() throws {
        let h = try Harness { $0.maximumRetainedAdvertisements = 3 }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, fill: 2)
        let lease = try h.lease()
        var parked: BorrowResult?
        #expect(try h.loader.borrow(adUnitID: "other", wait: .seconds(5)) { parked = $0 }.parked != nil)
        try h.loader.prefetch(adUnitID: "unit")
        h.loader.shutdown()
        #expect(parked == .unavailable)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(lease.id, shown: true) }
        #expect(throws: LoaderError.self) { try h.borrow() }
        #expect(throws: LoaderError.self) { try h.loader.setEnabled(false, loader: "default") }
        h.source.succeedAll()
        let stats = h.stats()
        #expect(stats.isBalanced)
        #expect(stats.available == 0 && stats.leased == 0)
        #expect(h.clock.pendingCount == 0)
    }

    // MARK: determinism

    @Test func sameSeedAndCallsGiveSameIdsAndEvents() throws {
        func run(seed: UInt64) throws -> [AdEvent] {
            let h = try Harness(seed: seed) { $0.retry.jitter = 0.5 }
            try h.fill()
            let lease = try h.lease(slot: "s")
            try h.loader.returnLease(lease.id, shown: true)
            try h.loader.prefetch(adUnitID: "unit")
            h.source.fail(0, .retryable)
            h.clock.advance(by: .seconds(30))
            h.source.succeedAll()
            return h.events
        }
        let first = try run(seed: 0xFEED)
        #expect(try run(seed: 0xFEED) == first)
        #expect(first.compactMap(\.adID).first?.hasPrefix("feed-") == true)
        let other = try run(seed: 0xBEEF)
        #expect(other.compactMap(\.leaseID) != first.compactMap(\.leaseID))
    }
}
