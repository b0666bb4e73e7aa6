// Swift Native Feed parked borrow answered when ads arrive
//
// Shows: a Borrow with a wait on an empty pool does not fail and is not retried by the client:
// the server parks it (Stats `parkedBorrows` 1) and answers it the moment the upstream answer
// arrives. Loader "slow" answers after 500 ms, so the parked call is easy to see.
// Look at: the Borrow running in its own task while Stats shows it parked; the lease it gets.
// Run: adloader examples run swift-native-feed-parked-borrow-answered-when-ads-arrive
import AdLoaderClient
import AdLoaderCore

enum NativeFeedParkedBorrowAnsweredWhenAdsArrive {
    static let example = Example(.swift, .native, "Feed parked borrow answered when ads arrive") { run in
        let client = run.client
        let adUnit = "cold-feed-\(run.id)"
        let clock = ContinuousClock()
        let start = clock.now

        // The cell borrows from a pool that has nothing yet, willing to wait up to 3 s.
        let borrow = Task {
            try await client.borrow(adUnitID: adUnit, loader: "slow", slot: "cold/position-1", wait: .seconds(3))
        }

        // Meanwhile, an operator's view: the call is parked and the pool's request is in flight.
        var parked: PoolStats?
        while clock.now - start < .seconds(2) {
            if let stats = try await client.stats(loader: "slow", adUnitID: adUnit).first, stats.parkedBorrows == 1 {
                parked = stats
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        run.log("while parked: parked \(parked?.parkedBorrows ?? 0), in flight \(parked?.inFlight ?? 0)")
        try run.expect(parked != nil && parked!.inFlight > 0, "the borrow is parked while ads are in flight")

        // The upstream answer arrives (about 500 ms): the parked borrow gets the first ad.
        let result = try await borrow.value
        guard case .leased(let lease, _) = result else { throw ExampleFailure("parked borrow ended \(result)") }
        let waited = clock.now - start
        run.log("answered after \(waited): ad \(lease.ad.id)")
        try run.expect(waited >= .milliseconds(400), "answered when the ads arrived, not at once (\(waited))")

        let stats = try await client.stats(loader: "slow", adUnitID: adUnit).first
        try run.expect(
            stats?.parkedBorrows == 0 && stats?.borrowHits == 1,
            "no longer parked, one hit: \(String(describing: stats))")
        _ = try await client.returnLease(lease.id, shown: false)
    }
}
