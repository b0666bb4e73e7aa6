// Swift Interstitial Between levels
//
// Shows: a game shows a full-screen interstitial at each level break. It prefetches when the
// game starts; at a level's end it borrows (waiting at most 1 s, the transition's length) and
// shows the ad, or skips the break when none is ready. Each shown ad is consumed; an ad
// borrowed for a break the player skipped goes back to the pool for the next break.
// Look at: `ad.format`, `ad.creative.fullScreenCreative` (markup or video URL, orientation,
// size); one slot per break ("level-N/end": a retried break shows the same ad).
// Run: adloader examples run swift-interstitial-between-levels
import AdLoaderClient
import AdLoaderCore

enum InterstitialBetweenLevels {
    static let example = Example(.swift, .interstitial, "Between levels") { run in
        let client = run.client
        let adUnit = "level-break-\(run.id)"

        _ = try await client.prefetch(adUnitID: adUnit, loader: "interstitial")  // the game starts

        var shownAds: [String] = []
        for level in 1...3 {
            // ... level \(level) is played ...
            let result = try await client.borrow(
                adUnitID: adUnit, loader: "interstitial", slot: "level-\(level)/end", wait: .seconds(1))
            guard case .leased(let lease, _) = result, let creative = lease.ad.creative.fullScreenCreative else {
                throw ExampleFailure("level \(level): no interstitial (\(result))")
            }
            try run.expect(lease.ad.format == .interstitial, "an interstitial, got \(lease.ad.format)")
            let media: String
            switch creative.media {
            case .markup(let html): media = "markup, \(html.utf8.count) bytes"
            case .videoURL(let url): media = "video \(url)"
            case .vastXML(let document): media = "VAST, \(document.utf8.count) bytes"
            }
            run.log(
                "level \(level) ends: ad \(lease.ad.id), \(creative.orientation), \(creative.width)×\(creative.height), \(media)"
            )

            // The player skips the break after level 2 (taps "next" during the transition).
            let shown = level != 2
            let outcome = try await client.returnLease(lease.id, shown: shown)
            try run.expect(
                outcome == (shown ? .consumed : .backInPool), "level \(level): \(String(describing: outcome))")
            if shown { shownAds.append(lease.ad.id) }
        }
        try run.expect(Set(shownAds).count == 2, "a new ad at every shown break")

        let stats = try await client.stats(loader: "interstitial", adUnitID: adUnit).first
        try run.expect(
            stats?.consumed == 2 && stats?.leased == 0, "2 consumed, none leased: \(String(describing: stats))")
    }
}
