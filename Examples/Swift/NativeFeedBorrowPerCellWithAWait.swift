// Swift Native Feed borrow per cell with a wait
//
// Shows: without a prefetch, each ad cell borrows as it is configured, with a wait: the first
// Borrows of an empty pool park on the server until the pool's first upstream answer arrives
// (50 ms here), then all of them are answered, each with a different ad. The cells borrow
// concurrently on one connection (calls are multiplexed; a parked call blocks nothing).
// Look at: `wait:` (how long a cell may hold its placeholder); distinct ad ids; Stats.
// Run: adloader examples run swift-native-feed-borrow-per-cell-with-a-wait
import AdLoaderClient
import AdLoaderCore

enum NativeFeedBorrowPerCellWithAWait {
    static let example = Example(.swift, .native, "Feed borrow per cell with a wait") { run in
        let client = run.client
        let adUnit = "search-results-\(run.id)"

        // Three ad cells come on screen at once; each may wait up to one second for its ad.
        let leases = try await withThrowingTaskGroup(of: Lease.self) { group in
            for position in [2, 7, 12] {
                group.addTask {
                    let result = try await client.borrow(
                        adUnitID: adUnit, loader: "feed", slot: "results/position-\(position)", wait: .seconds(1))
                    guard case .leased(let lease, _) = result else {
                        throw ExampleFailure("position \(position): \(result) after waiting 1 s")
                    }
                    return lease
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for lease in leases { run.log("\(lease.slot ?? ""): ad \(lease.ad.id)") }
        try run.expect(Set(leases.map(\.ad.id)).count == 3, "three cells, three different ads")

        // Every borrow was a hit; the first one also started the pool's top-up.
        let stats = try await client.stats(loader: "feed", adUnitID: adUnit)
        try run.expect(stats.first?.borrowHits == 3 && stats.first?.borrowMisses == 0, "3 hits, 0 misses: \(stats)")

        // The cells were not shown (the user scrolled past): give the ads back for the next cells.
        for lease in leases { _ = try await client.returnLease(lease.id, shown: false) }
    }
}
