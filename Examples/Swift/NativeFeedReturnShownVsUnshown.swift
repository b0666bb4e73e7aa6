// Swift Native Feed return shown vs unshown
//
// Shows: how a lease ends. An ad returned `shown: true` counts a show; with the loader's
// `showCountThreshold` of 1 it is consumed (and the pool tops up). An ad returned unshown
// (the cell never became visible) goes back to the pool for the next cell: nothing is wasted.
// Look at: the `ReturnOutcome` of each Return; `consumed` and `available` in Stats.
// Run: adloader examples run swift-native-feed-return-shown-vs-unshown
import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

enum NativeFeedReturnShownVsUnshown {
    static let example = Example(.swift, .native, "Feed return shown vs unshown") { run in
        let client = run.client
        let adUnit = "feed-native-\(run.id)"

        guard
            case .leased(let visible, _) = try await client.borrow(
                adUnitID: adUnit, loader: "feed", slot: "feed-1/position-3", wait: .seconds(1)),
            case .leased(let offscreen, _) = try await client.borrow(
                adUnitID: adUnit, loader: "feed", slot: "feed-1/position-8", wait: .seconds(1))
        else { throw ExampleFailure("no ads to lend") }

        // Position 3 was on screen long enough to count as an impression.
        let shown = try await client.returnLease(visible.id, shown: true)
        run.log("shown:   ad \(visible.ad.id) -> \(shown.map { "\($0)" } ?? "?")")
        try run.expect(
            shown == .consumed, "a shown ad reaches its show count and is consumed, got \(String(describing: shown))")

        // Position 8 was prepared but the user left the screen before it appeared.
        let unshown = try await client.returnLease(offscreen.id, shown: false)
        run.log("unshown: ad \(offscreen.ad.id) -> \(unshown.map { "\($0)" } ?? "?")")
        try run.expect(
            unshown == .backInPool, "an unshown ad goes back to the pool, got \(String(describing: unshown))")

        // Returning twice is an error: the lease is gone.
        do {
            _ = try await client.returnLease(offscreen.id, shown: false)
            throw ExampleFailure("a second Return of the same lease must fail")
        } catch let status as Status {
            try run.expect(status.code == .notFound, "NOT_FOUND for a lease already returned, got \(status)")
        }

        let stats = try await client.stats(loader: "feed", adUnitID: adUnit).first
        run.log(
            "stats: consumed \(stats?.consumed ?? 0), leased \(stats?.leased ?? 0), available \(stats?.available ?? 0)")
        try run.expect(
            stats?.consumed == 1 && stats?.leased == 0, "1 consumed, none leased: \(String(describing: stats))")
    }
}
