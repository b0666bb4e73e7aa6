// Swift Native One loader per targeting
//
// Shows: an ad is requested with one targeting (keywords, content URL, key-values) and must be
// shown only where that targeting holds. Configure one loader per targeting ("sports" and
// "news" in Examples/adloaderd.json, each with its own `targeting` and `keywords`): each keeps
// its own pool of the same ad unit, and ads loaded for one are never served through the other.
// Look at: `loader:` on every call; `ad.loader` of the lent ads; one pool per (loader, ad unit).
// Run: adloader examples run swift-native-one-loader-per-targeting
import AdLoaderClient
import AdLoaderCore

enum NativeOneLoaderPerTargeting {
    static let example = Example(.swift, .native, "One loader per targeting") { run in
        let client = run.client
        let adUnit = "article-native-\(run.id)"  // the same ad unit in both sections of the app

        var adsBySection: [String: Set<String>] = [:]
        for section in ["sports", "news"] {
            for position in 1...2 {
                let result = try await client.borrow(
                    adUnitID: adUnit, loader: section, slot: "\(section)/article-\(position)", wait: .seconds(1))
                guard case .leased(let lease, _) = result else { throw ExampleFailure("\(section): \(result)") }
                run.log("\(section) article \(position): ad \(lease.ad.id) from loader \(lease.ad.loader)")
                try run.expect(lease.ad.loader == section, "an ad of loader \(section), got \(lease.ad.loader)")
                adsBySection[section, default: []].insert(lease.ad.id)
                _ = try await client.returnLease(lease.id, shown: true)
            }
        }
        try run.expect(adsBySection["sports"]!.isDisjoint(with: adsBySection["news"]!), "no ad served in both sections")

        // Stats of the ad unit: two pools, each with its own upstream requests.
        let pools = try await client.stats(adUnitID: adUnit)
        run.log("pools: " + pools.map { "\($0.loader) (\($0.upstreamRequests) requests)" }.joined(separator: ", "))
        try run.expect(pools.map(\.loader) == ["news", "sports"], "one pool per loader, got \(pools.map(\.loader))")
        try run.expect(
            pools.allSatisfy { $0.upstreamRequests >= 1 && $0.consumed == 2 }, "each loaded and consumed its own")
    }
}
