// Swift Native Feed prefetch before the list renders
//
// Shows: the feed screen calls Prefetch as it opens, so that by the time the list renders its
// first ad cells the pool holds ads and every Borrow is answered at once (wait 0), with no
// upstream round trip on the scroll path. Prefetch fills the pool to its target: with the
// default `sizing` "demand", a new pool (no demand measured yet) asks for one batch, and the
// target grows with the borrows it measures, up to `maximumRetainedAdvertisements`. A second
// Prefetch is a no-op: ads already loaded *or in flight* count.
// Look at: `requested` of the two Prefetch answers; Stats `target`; the borrows with `wait: .zero`.
// Run: adloader examples run swift-native-feed-prefetch-before-the-list-renders
//      (against a daemon started with Examples/adloaderd.json; loader "feed": 5 ads per
//      request, at most 10 retained)
import AdLoaderClient
import AdLoaderCore

enum NativeFeedPrefetchBeforeTheListRenders {
    static let example = Example(.swift, .native, "Feed prefetch before the list renders") { run in
        let client = run.client
        let adUnit = "home-feed-\(run.id)"

        // The screen opens: fill the pool while the list is still being laid out.
        let first = try await client.prefetch(adUnitID: adUnit, loader: "feed")
        run.log("prefetch: available \(first.available), in flight \(first.inFlight), requested \(first.requested)")
        let target = try await client.stats(loader: "feed", adUnitID: adUnit).first?.target ?? 0
        run.log("the pool's target: \(target) ads")
        try run.expect(first.requested > 0 && first.requested == target, "a new pool asks for its target")

        // Calling it again (another screen, a retry) asks for nothing: the target is coming.
        let again = try await client.prefetch(adUnitID: adUnit, loader: "feed")
        try run.expect(again.requested == 0, "a second prefetch asks for nothing, got \(again.requested)")

        // Layout, images, first frame... (here: until the loads of 50 ms have arrived, at most 5 s).
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while try await client.stats(loader: "feed", adUnitID: adUnit).first?.available ?? 0 < target,
            clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }

        // The list renders ads at positions 3, 8 and 13: each cell borrows without waiting.
        for position in [3, 8, 13] {
            let result = try await client.borrow(adUnitID: adUnit, loader: "feed", slot: "home/position-\(position)")
            guard case .leased(let lease, _) = result else {
                throw ExampleFailure("position \(position): no ad at once after the prefetch (\(result))")
            }
            run.log("position \(position): \(lease.ad.creative.nativeContent?.headline ?? "?")")
        }

        let stats = try await client.stats(loader: "feed", adUnitID: adUnit)
        try run.expect(stats.first?.borrowHits == 3 && stats.first?.borrowMisses == 0, "3 hits, 0 misses: \(stats)")
    }
}
