import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct PoolSnapshotTests {
    /// A pool with available ads, a slotted lease, a lease shown once (threshold 2), a lease
    /// marked for removal, a blocked creative and measured demand.
    private func busyHarness(seed: UInt64 = 7) throws -> (Harness, leases: [Lease]) {
        let h = try Harness(seed: seed) {
            $0.showCountThreshold = 2
            $0.maximumRetainedAdvertisements = 10
        }
        h.source.creativeID = { "crid-\($0)" }
        try h.fill()
        let slotted = try h.lease(slot: "feed/1")
        let shown = try h.lease()
        try h.loader.returnLease(shown.id, shown: true)  // back in the pool, showCount 1
        let other = try h.lease(slot: "feed/2")
        let invalid = try h.lease()
        try h.loader.invalidateLease(invalid.id, shown: false, reason: "bad creative")
        h.clock.advance(by: .seconds(7))
        try h.loader.prefetch(adUnitID: "unit", count: 3)
        h.source.succeedAll()
        return (h, [slotted, other])
    }

    @Test func snapshotThenRestoreThenSnapshotRoundTrips() throws {
        let (h, _) = try busyHarness()
        let before = h.loader.snapshot()
        #expect(before.count == 1)
        let snapshot = try #require(before.first)
        #expect(snapshot.loader == "default" && snapshot.adUnitID == "unit" && snapshot.format == .native)
        #expect(snapshot.leases.count == 2)
        #expect(snapshot.ads.count == h.stats().available)
        // The ad shown once went back and was lent again, to "feed/2": its lease keeps the count.
        #expect(snapshot.leases.map(\.pooled.ad.showCount).sorted() == [0, 1])
        #expect(snapshot.ads.allSatisfy { $0.sourceState != nil && $0.ad.sourceContext == nil })
        #expect(snapshot.blockedCreatives.count == 1)
        #expect(snapshot.demand.windowCount + Int(snapshot.demand.averageRate * 5_000) > 0)
        #expect(snapshot.prefetchWanted == 3)
        // Lending order: soonest expiry first.
        #expect(snapshot.ads.map(\.ad.expiresAt) == snapshot.ads.map(\.ad.expiresAt).sorted())

        // Another instance (another seed), at the same time.
        let other = try Harness(seed: 99) { $0.showCountThreshold = 2 }
        other.clock.advance(to: h.clock.now)
        let result = other.loader.restore(before)
        #expect(result.skipped.isEmpty)
        #expect(result.pools == 1 && result.leases == 2 && result.ads == snapshot.ads.count)
        #expect(result.expired == 0 && result.reclaimed == 0)
        #expect(other.loader.snapshot() == before)
        #expect(other.stats().isBalanced)
        #expect(other.loader.adsHeld == snapshot.ads.count + 2)
    }

    @Test func restoredLeasesKeepTheirIDsSlotsAndContexts() throws {
        let (h, leases) = try busyHarness()
        let other = try Harness(seed: 99) { $0.showCountThreshold = 2 }
        other.clock.advance(to: h.clock.now)
        other.loader.restore(h.loader.snapshot())
        // The slot gets its lease back, renewed, under the same id.
        guard case .leased(let again, reused: true) = try other.borrow(slot: "feed/1") else {
            throw TestFailure("the slot lost its lease")
        }
        #expect(again.id == leases[0].id)
        #expect(again.ad.id == leases[0].ad.id)
        #expect(other.loader.hasLease(leases[1].id))
        // A shown Return of a restored lease reaches the source with the rebuilt context; the
        // ad was shown once before the snapshot, so this second show consumes it (threshold 2).
        #expect(leases[1].ad.showCount == 1)
        #expect(try other.loader.returnLease(leases[1].id, shown: true) == .consumed)
        let shown = try #require(other.source.shown.last)
        #expect(shown.id == leases[1].ad.id)
        #expect((shown.sourceContext as? TestContext)?.number == (leases[1].ad.sourceContext as? TestContext)?.number)
        #expect(throws: LoaderError.self) { try other.loader.returnLease(leases[1].id, shown: false) }
        // The blocked creative stays blocked in the new instance.
        #expect(other.loader.loaderStates().first?.blockedCreatives == 1)
    }

    @Test func restoringIntoTheSameSeedNeverRepeatsALeaseOrAdID() throws {
        let (h, leases) = try busyHarness(seed: 7)
        let snapshot = h.loader.snapshot()
        let other = try Harness(seed: 7) { $0.showCountThreshold = 2 }
        other.clock.advance(to: h.clock.now)
        other.loader.restore(snapshot)
        var leaseIDs = Set(leases.map(\.id))
        // Their table slots are free again: a lease lent there must not get their ids back.
        for lease in leases { try other.loader.returnLease(lease.id, shown: false) }
        for round in 0..<40 {
            try other.loader.prefetch(adUnitID: "unit")
            other.source.succeedAll()
            guard case .leased(let lease, reused: false) = try other.borrow(slot: "cell/\(round)") else {
                throw TestFailure("no lease in round \(round)")
            }
            #expect(leaseIDs.insert(lease.id).inserted, "lease id \(lease.id) repeated")
            try other.loader.returnLease(lease.id, shown: true)
        }
        // Every ad the loader received (restored ones first) has its own id.
        let received = other.events(.received).compactMap(\.adID)
        #expect(received.count > snapshot[0].ads.count + snapshot[0].leases.count)
        #expect(Set(received).count == received.count)
        #expect(!other.loader.hasLease(leases[0].id) && !other.loader.hasLease(leases[1].id))
    }

    @Test func whatExpiredMeanwhileIsDroppedAsAnExpiryWould() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 4
            $0.numberOfAdvertisements = 1
        }
        try h.loader.prefetch(adUnitID: "unit")
        let start = h.clock.now
        h.source.succeed(0, sourceExpiry: start + .seconds(60))
        h.source.succeed(0, sourceExpiry: start + .seconds(600))
        h.source.succeed(0)
        h.source.succeed(0)
        let short = try h.lease(slot: "a")  // the 60 s ad; its lease ends with it
        let long = try h.lease(slot: "b")  // the 600 s ad; lease timeout 300 s
        let snapshot = h.loader.snapshot()
        #expect(snapshot[0].leases.count == 2 && snapshot[0].ads.count == 2)

        let other = try Harness(seed: 99)
        other.clock.advance(to: start + .seconds(400))
        let result = other.loader.restore(snapshot)
        // Both leases ended meanwhile: the 60 s ad expired, the 600 s one is back in the pool.
        #expect(result.reclaimed == 2)
        #expect(result.expired == 1)
        #expect(result.ads == 3 && result.leases == 0)
        #expect(!other.loader.hasLease(short.id) && !other.loader.hasLease(long.id))
        #expect(other.events(.expired).map(\.adID) == [short.ad.id])
        #expect(other.source.droppedIDs == [short.ad.id: .expired])
        #expect((other.source.dropped.first?.ad.sourceContext as? TestContext) != nil)
        let stats = other.stats()
        #expect(stats.available == 3 && stats.leased == 0 && stats.expired == 1 && stats.leasesReclaimed == 2)
        #expect(stats.isBalanced)
        let after = try #require(other.loader.snapshot().first)
        #expect(!after.ads.contains { $0.ad.id == short.ad.id })
        #expect(after.ads.contains { $0.ad.id == long.ad.id })

        // Past every ad's life: everything is dropped as expired, nothing is lent.
        let late = try Harness(seed: 5)
        late.clock.advance(to: start + .seconds(3_601))
        let lateResult = late.loader.restore(snapshot)
        #expect(lateResult.expired == 4 && lateResult.ads == 0)
        #expect(late.loader.snapshot().first?.ads.isEmpty == true)
        #expect(try late.borrow() == .noAdYet)
    }

    @Test func snapshotsTheLoaderCannotTakeAreSkippedAndNamed() throws {
        let (h, _) = try busyHarness()
        var snapshots = h.loader.snapshot()
        var unknown = snapshots[0]
        unknown.loader = "gone"
        var video = snapshots[0]
        video.adUnitID = "other"
        video.format = .interstitial
        snapshots += [unknown, video]
        let other = try Harness(seed: 99) { $0.showCountThreshold = 2 }
        other.clock.advance(to: h.clock.now)
        let result = other.loader.restore(snapshots)
        #expect(result.pools == 1)
        #expect(result.skipped.map(\.loader) == ["gone", "default"])
        #expect(result.skipped.map(\.reason).first == "unknown loader")
        #expect(result.skipped.last?.reason.hasPrefix("format changed") == true)
        // Restoring the same snapshot twice reopens no lease twice.
        let again = other.loader.restore([h.loader.snapshot()[0]])
        #expect(again.leases == 0 && again.ads == 0)
        #expect(again.duplicates == snapshots[0].ads.count + snapshots[0].leases.count)
        #expect(other.loader.snapshot() == [snapshots[0]])
        #expect(other.stats().isBalanced)
        try other.loader.setEnabled(false, loader: "default")
        #expect(other.loader.restore(h.loader.snapshot()).skipped.first?.reason == "loader is disabled")
    }

    @Test func anEmptyLoaderSnapshotsNothing() throws {
        let h = try Harness()
        #expect(h.loader.snapshot().isEmpty)
        #expect(h.loader.snapshot(loader: "default", adUnitID: "unit") == nil)
        try h.fill()
        #expect(h.loader.snapshot(loader: "default", adUnitID: "unit")?.ads.count == 10)
    }
}
