// Swift Native Watch events
//
// Shows: the event stream of a pool (Watch), as a dashboard or an audit log would consume it:
// an ad's whole life from the upstream answer (LOAD_FINISHED, RECEIVED) through a lease
// (LEASED, RETURNED) to its end (REMOVED reason consumed).
// Look at: `client.watch(...)` started before the calls it should see (nothing is replayed);
// the events of one ad id in order; cancelling the stream by leaving the loop.
// Run: adloader examples run swift-native-watch-events
import AdLoaderClient
import AdLoaderCore

enum NativeWatchEvents {
    static let example = Example(.swift, .native, "Watch events") { run in
        let client = run.client
        let adUnit = "watched-feed-\(run.id)"

        // Subscribe first: Watch streams from the moment the server reads it.
        let events = client.watch(loader: "feed", adUnitID: adUnit, timeout: .seconds(10))

        // Some traffic: one cell borrows an ad and shows it.
        guard
            case .leased(let lease, _) = try await client.borrow(
                adUnitID: adUnit, loader: "feed", slot: "watched/position-1", wait: .seconds(1))
        else { throw ExampleFailure("no ad") }
        _ = try await client.returnLease(lease.id, shown: true)

        // Read until the shown ad is gone; leaving the loop cancels the Watch.
        var seen: [AdEvent.Kind] = []
        for try await event in events {
            if event.kind == .loadFinished { run.log("load finished: \(event.count) ads") }
            guard event.adID == lease.ad.id else { continue }
            run.log("\(event.kind)" + (event.reason.map { " (\($0))" } ?? ""))
            seen.append(event.kind)
            if event.kind == .removed {
                try run.expect(
                    event.reason == .consumed,
                    "removed because it was consumed, got \(String(describing: event.reason))")
                break
            }
        }
        try run.expect(seen == [.received, .leased, .returned, .removed], "the ad's life in order, got \(seen)")
    }
}
