// Swift Rewarded Video for coins
//
// Shows: a rewarded ad ("watch a video for 50 coins"). The offer button is enabled only when
// an ad is ready (Borrow with wait 0 after a prefetch); the ad carries its reward; the app
// grants it when the video completes and returns the lease shown. A player who closes the
// video early gets nothing, and the ad goes back to the pool for the next offer.
// Look at: `creative.reward` (type, amount); the Return's `shown` deciding the outcome.
// Run: adloader examples run swift-rewarded-video-for-coins
import AdLoaderClient
import AdLoaderCore

enum RewardedVideoForCoins {
    static let example = Example(.swift, .rewarded, "Video for coins") { run in
        let client = run.client
        let adUnit = "coins-offer-\(run.id)"

        // The shop screen opens: load, then enable the offer once an ad is ready (at most 3 s).
        _ = try await client.prefetch(adUnitID: adUnit, loader: "rewarded")
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        while try await client.stats(loader: "rewarded", adUnitID: adUnit).first?.available ?? 0 < 2,
            clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }

        var coins = 0
        for (player, completes) in [("player-a", false), ("player-b", true)] {
            guard
                case .leased(let lease, _) = try await client.borrow(adUnitID: adUnit, loader: "rewarded", slot: player),
                let reward = lease.ad.creative.fullScreenCreative?.reward
            else { throw ExampleFailure("\(player): no rewarded ad ready") }
            try run.expect(lease.ad.format == .rewarded && reward.amount > 0, "a rewarded ad with its reward")

            // ... the video plays; player-a closes it early, player-b watches to the end ...
            let outcome = try await client.returnLease(lease.id, shown: completes)
            if completes { coins += reward.amount }
            run.log(
                "\(player): ad \(lease.ad.id) offers \(reward.amount) \(reward.type); completed \(completes) -> \(outcome.map { "\($0)" } ?? "?")"
            )
            try run.expect(
                outcome == (completes ? .consumed : .backInPool), "\(player): \(String(describing: outcome))")
        }
        try run.expect(coins > 0, "only the completed video grants its reward")
    }
}
