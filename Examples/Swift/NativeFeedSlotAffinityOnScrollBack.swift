// Swift Native Feed slot affinity on scroll-back
//
// Shows: a cell scrolls out of view (and is destroyed) and back (recreated); borrowing again
// with the same slot key returns the same lease and the same ad: the user sees the ad they
// saw, and it costs no upstream request. Borrowing again also renews the lease (it runs the
// loader's `leaseTimeout` from now, never past its ad's expiry), so a cell that stays on
// screen keeps its ad while it keeps borrowing for its slot. Another slot gets another ad.
// Look at: `slot:` (name the feed cell: feed id + position); `reused`; the same lease id; the
// lease's `expiresAt`.
// Run: adloader examples run swift-native-feed-slot-affinity-on-scroll-back
import AdLoaderClient
import AdLoaderCore

enum NativeFeedSlotAffinityOnScrollBack {
    static let example = Example(.swift, .native, "Feed slot affinity on scroll-back") { run in
        let client = run.client
        let adUnit = "feed-native-\(run.id)"
        let slot = "feed-42/position-7"

        // The cell at position 7 appears.
        guard
            case .leased(let first, let firstReused) = try await client.borrow(
                adUnitID: adUnit, loader: "feed", slot: slot, wait: .seconds(1))
        else { throw ExampleFailure("no ad for \(slot)") }
        run.log("appears:     lease \(first.id), ad \(first.ad.id), reused \(firstReused)")
        try run.expect(!firstReused, "the first borrow of a slot is a new lease")

        // The user scrolls down (the cell is destroyed) and back up (a new cell, same slot).
        guard
            case .leased(let again, let reused) = try await client.borrow(adUnitID: adUnit, loader: "feed", slot: slot)
        else { throw ExampleFailure("no ad for \(slot) on scroll-back") }
        run.log("scroll-back: lease \(again.id), ad \(again.ad.id), reused \(reused)")
        try run.expect(reused && again.id == first.id && again.ad.id == first.ad.id, "same lease, same ad")
        try run.expect(again.expiresAt >= first.expiresAt, "a reused lease is renewed, never shortened")
        try run.expect(again.expiresAt <= again.ad.expiresAt, "a lease never outlives its ad")

        // A different cell gets a different ad.
        guard
            case .leased(let other, _) = try await client.borrow(
                adUnitID: adUnit, loader: "feed", slot: "feed-42/position-12", wait: .seconds(1))
        else { throw ExampleFailure("no ad for position 12") }
        try run.expect(other.ad.id != first.ad.id, "another slot, another ad")

        // The ad at position 7 was displayed; position 12 was not.
        _ = try await client.returnLease(first.id, shown: true)
        _ = try await client.returnLease(other.id, shown: false)
    }
}
