import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// A clean stop suspends the pools (no loss notice for a kept ad); the next start restores
/// them with the time that passed applied: what expired meanwhile is gone as an expiry would
/// have removed it, leases come back under their ids and slots.
struct NativeAdvertisementLoaderSuspensionTests {
    static func number(_ ad: Ad) -> Int? { (ad.sourceContext as? TestContext)?.number }

    func makeHarness() throws -> Harness {
        try Harness {
            $0.lifetime = .seconds(100)
            $0.leaseTimeout = .seconds(60)
            $0.sweepInterval = .seconds(1)
        }
    }

    /// A second loader on the same clock: the restarted daemon.
    func restarted(_ h: Harness, source: FakeDemandSource) throws -> NativeAdvertisementLoader {
        try NativeAdvertisementLoader(
            loaders: [h.configuration], sources: ["fake": source], budgets: [:], clock: h.clock, scheduler: h.clock,
            idSeed: 99)
    }

    @Test func suspendedAdsAndLeasesComeBackAndOldLeasesWork() throws {
        let h = try makeHarness()
        try h.fill()
        let slotted = try h.lease(slot: "cell-1")
        let plain = try h.lease()
        let suspension = h.loader.suspend()
        #expect(suspension.count == 1 && suspension[0].ads.count == 8)
        #expect(suspension[0].leases.map(\.leaseID).sorted() == [slotted.id, plain.id].sorted())
        #expect(h.source.dropped.isEmpty, "no loss notice for a suspended ad")
        h.clock.advance(by: .seconds(30))
        let source = FakeDemandSource()
        let loader = try restarted(h, source: source)
        let report = loader.restoreSuspension(suspension)
        #expect(report.ads == 8 && report.leases == 2 && report.expired == 0 && report.skipped.isEmpty)
        let stats = try #require(loader.stats(adUnitID: "unit").first)
        #expect(stats.restoredAds == 10 && stats.restoredLeases == 2 && stats.available == 8 && stats.leased == 2)
        // The slot gets its lease back, same id, same ad, same context.
        let again = try loader.borrow(adUnitID: "unit", slot: "cell-1", whenServed: BorrowOutcome.neverServed)
        guard case .answered(.leased(let lease, let reused)) = again else {
            Issue.record("expected the slot's lease, got \(again)")
            return
        }
        #expect(reused && lease.id == slotted.id && lease.ad.id == slotted.ad.id)
        #expect(lease.ad.creative == slotted.ad.creative && Self.number(lease.ad) == Self.number(slotted.ad))
        // A Return of a lease lent before the restart works, and bills with the old context.
        #expect(try loader.returnLease(plain.id, shown: true) == .consumed)
        #expect(source.shown.map(\.id) == [plain.ad.id] && source.shown.map(Self.number) == [Self.number(plain.ad)])
        #expect(try loader.returnLease(slotted.id, shown: false) == .backInPool)
        #expect(throws: LoaderError.self) { try loader.returnLease(plain.id, shown: true) }
        // New leases never take an ad a restored lease holds.
        var lent: Set<String> = []
        while case .leased(let next, _) = try h.borrowOn(loader) { lent.insert(next.ad.id) }
        #expect(lent.count == 9 && !lent.contains(plain.ad.id))
        #expect(try #require(loader.stats(adUnitID: "unit").first).isBalanced)
    }

    @Test func adsAndLeasesThatExpiredWhileDownAreGoneAsAnExpiryWouldHaveDone() throws {
        let h = try makeHarness()
        try h.fill()
        let held = try h.lease(slot: "cell-1")
        try h.loader.returnLease(try h.lease().id, shown: true)
        let suspension = h.loader.suspend()
        #expect(suspension[0].ads.count + suspension[0].leases.count == 9)
        // Down for 70 s: the leases' 60 s timeout passed, the ads' 100 s life did not.
        h.clock.advance(by: .seconds(70))
        let source = FakeDemandSource()
        let loader = try restarted(h, source: source)
        let report = loader.restoreSuspension(suspension)
        #expect(report.ads == 9 && report.leases == 0 && report.reclaimed == 1)
        #expect(throws: LoaderError.self) { try loader.returnLease(held.id, shown: true) }
        #expect(source.shown.isEmpty, "a reclaimed lease's Return bills nothing")
        // Then past their life: expired by the sweep, one loss notice each (none was shown).
        h.clock.advance(by: .seconds(31))
        #expect(source.dropped.count == 9 && source.dropped.allSatisfy { $0.reason == .expired })
    }

    @Test func adsExpiredAtTheRestartAreDroppedWithTheirNotices() throws {
        let h = try makeHarness()
        try h.fill()
        _ = try h.lease()
        let suspension = h.loader.suspend()
        h.clock.advance(by: .seconds(200))
        let source = FakeDemandSource()
        let loader = try restarted(h, source: source)
        let report = loader.restoreSuspension(suspension)
        #expect(report.ads == 0 && report.expired == 10)
        #expect(source.dropped.count == 10 && source.dropped.allSatisfy { $0.reason == .expired })
        #expect(Set(source.dropped.map(\.ad.id)).count == 10)
        #expect(try #require(loader.stats(adUnitID: "unit").first).expired == 10)
    }

    /// Each restored pool is announced once by a `restored` event (ads back, leases back, ads
    /// that expired while down, where from), kept for a Watch that opens later.
    @Test func eachRestoredPoolIsAnnouncedAndKeptForALaterWatch() throws {
        let h = try makeHarness()
        try h.fill()
        try h.fill("short")
        _ = try h.lease(slot: "cell-1")
        _ = try h.lease("short")
        var suspension = h.loader.suspend()
        // The "short" pool's ads end 10 s from now, the restart comes 30 s later.
        let short = try #require(suspension.firstIndex { $0.adUnitID == "short" })
        for index in suspension[short].ads.indices {
            suspension[short].ads[index].ad.expiresAt = h.clock.now + .seconds(10)
        }
        for index in suspension[short].leases.indices {
            suspension[short].leases[index].pooled.ad.expiresAt = h.clock.now + .seconds(10)
        }
        h.clock.advance(by: .seconds(30))
        let restoredAt = h.clock.now
        let loader = try restarted(h, source: FakeDemandSource())
        var events: [AdEvent] = []
        _ = loader.addObserver { events.append($0) }
        let report = loader.restoreSuspension(suspension)
        let restored = events.filter { $0.kind == .restored }
        #expect(restored.map(\.adUnitID) == ["short", "unit"])
        #expect(restored.map(\.count) == [0, 10])
        #expect(
            restored.map(\.restoration) == [
                AdEvent.Restoration(origin: .suspension, leases: 0, expired: 10),
                AdEvent.Restoration(origin: .suspension, leases: 1, expired: 0),
            ])
        #expect(report.expired == 10 && report.ads + report.leases == 10)
        // What a Watch opening later gets: the same events, at the restore's time, filtered.
        h.clock.advance(by: .seconds(5))
        #expect(loader.restorations() == restored)
        #expect(loader.restorations().allSatisfy { $0.at == restoredAt })
        #expect(loader.restorations(adUnitID: "unit").map(\.adUnitID) == ["unit"])
        #expect(loader.restorations(loader: "other").isEmpty)
        // A loader that restored nothing has none.
        #expect(try restarted(h, source: FakeDemandSource()).restorations().isEmpty)
    }

    @Test func adsOfALoaderThatIsGoneAreDroppedAndCounted() throws {
        let h = try makeHarness()
        try h.fill()
        let suspension = h.loader.suspend()
        var other = h.configuration
        other.name = "other"
        let loader = try NativeAdvertisementLoader(
            loaders: [other], sources: ["fake": FakeDemandSource()], budgets: [:], clock: h.clock, scheduler: h.clock,
            idSeed: 99)
        #expect(loader.restoreSuspension(suspension).skipped.map(\.reason) == ["unknown loader"])
        #expect(loader.stats().isEmpty)
    }

    @Test func anAdWhoseContextCannotBeKeptIsDroppedAtTheStopWithItsNotice() throws {
        let h = try makeHarness()
        h.source.opaqueContexts = true
        try h.fill()
        let suspension = h.loader.suspend()
        #expect(suspension.allSatisfy { $0.ads.isEmpty && $0.leases.isEmpty })
        #expect(h.source.dropped.count == 10 && h.source.dropped.allSatisfy { $0.reason == .shutdown })
    }
}

extension Harness {
    /// Borrows from another loader without waiting.
    func borrowOn(_ loader: NativeAdvertisementLoader) throws -> BorrowResult {
        let outcome = try loader.borrow(adUnitID: "unit", slot: nil, whenServed: BorrowOutcome.neverServed)
        guard let answer = outcome.answer else { throw TestFailure("parked") }
        return answer
    }
}
