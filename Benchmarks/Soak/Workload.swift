import AdLoaderClient
import AdLoaderCore
import AdLoaderWire
import Foundation

/// The mixed calls of the soak, each kind in its own loop on its own connection(s), until
/// cancelled. Expected refusals (NOT_FOUND for a lease the timeout reclaimed, no ad yet) are
/// counted; anything a correct daemon never answers is reported as unexpected.
struct Workload: Sendable {
    let endpoint: Endpoint
    let adminPort: Int
    let tally: Tally

    /// Starts every loop; cancel the returned tasks to stop.
    func start() -> [Task<Void, Never>] {
        var tasks: [Task<Void, Never>] = []
        for worker in 0..<3 { tasks.append(loop("feed-slots") { try await feedWithSlots(worker: worker, $0) }) }
        tasks.append(loop("feed-plain") { try await feedWithoutSlots($0) })
        tasks.append(loop("parked") { try await parkedBorrows($0) })
        tasks.append(loop("parked-timeout") { try await parkedBorrowsThatTimeOut($0) })
        tasks.append(loop("watch") { try await watchStreams($0) })
        tasks.append(loop("stats") { try await statsCalls($0) })
        tasks.append(Task.detached { await connectionChurn() })
        tasks.append(Task.detached { await garbageConnections() })
        tasks.append(Task.detached { await adminScrapes() })
        return tasks
    }

    /// Runs `body` with a fresh connection, reconnecting after a connection-level failure.
    private func loop(_ name: String, _ body: @escaping @Sendable (AdLoaderClient) async throws -> Void) -> Task<
        Void, Never
    > {
        Task.detached {
            var random = SystemRandomNumberGenerator()
            while !Task.isCancelled {
                do {
                    let client = try AdLoaderClient.connect(to: endpoint)
                    defer { client.close() }
                    while !Task.isCancelled { try await body(client) }
                } catch is CancellationError {
                    return
                } catch let status as Status {
                    record(status, in: name)
                } catch {
                    if Task.isCancelled { return }
                    tally.unexpected("\(name): \(error)")
                    try? await Task.sleep(for: .milliseconds(Int.random(in: 50...150, using: &random)))
                }
            }
        }
    }

    private func record(_ status: Status, in name: String) {
        switch status.code {
        case .notFound, .deadlineExceeded, .cancelled: tally.add("status.\(status.code)")
        default: tally.unexpected("\(name): \(status)")
        }
    }

    /// A cell borrowing with its slot key: shown (consumes the ad), unshown, or abandoned to
    /// the lease timeout; now and then the same slot again (REUSED).
    private func feedWithSlots(worker: Int, _ client: AdLoaderClient) async throws {
        let user = Int.random(in: 0..<500)
        let slot = "user-\(user)/cell-\(Int.random(in: 0..<8))"
        tally.add("call.borrow")
        let result = try await client.borrow(adUnitID: "feed-\(worker % 2)", slot: slot)
        guard case .leased(let lease, let reused) = result else {
            tally.add("borrow.noAd")
            return
        }
        tally.add(reused ? "borrow.reused" : "borrow.leased")
        switch Int.random(in: 0..<10) {
        case 0..<4: try await giveBack(lease, shown: true, client)
        case 4..<9: try await giveBack(lease, shown: false, client)
        default: tally.add("lease.abandoned")
        }
    }

    private func feedWithoutSlots(_ client: AdLoaderClient) async throws {
        tally.add("call.borrow")
        guard case .leased(let lease, _) = try await client.borrow(adUnitID: "feed-plain") else {
            tally.add("borrow.noAd")
            return
        }
        tally.add("borrow.leased")
        try await giveBack(lease, shown: Bool.random(), client)
    }

    /// A return of a lease the timeout may have reclaimed already: NOT_FOUND is fine then.
    private func giveBack(_ lease: Lease, shown: Bool, _ client: AdLoaderClient) async throws {
        tally.add("call.return")
        do {
            _ = try await client.returnLease(lease.id, shown: shown)
            tally.add(shown ? "return.shown" : "return.unshown")
        } catch let status as Status where status.code == .notFound {
            tally.add("return.notFound")
        }
    }

    /// Borrows from a 6-ad pool, faster than it refills: many park and are answered when ads
    /// arrive.
    private func parkedBorrows(_ client: AdLoaderClient) async throws {
        tally.add("call.borrow")
        let result = try await client.borrow(
            adUnitID: "small-\(Int.random(in: 0..<3))", loader: "small", wait: .milliseconds(300))
        if case .leased(let lease, _) = result {
            tally.add("parked.leased")
            try await giveBack(lease, shown: Bool.random(), client)
        } else {
            tally.add("parked.noAd")
        }
    }

    /// Borrows from a source that never fills: each parks, then ends at its wait or deadline.
    private func parkedBorrowsThatTimeOut(_ client: AdLoaderClient) async throws {
        tally.add("call.borrow")
        do {
            let result = try await client.borrow(
                adUnitID: "nothing", loader: "parking", wait: .milliseconds(Int.random(in: 20...200)),
                timeout: Bool.random() ? .milliseconds(100) : nil)
            if case .leased = result { tally.unexpected("parking: a source with fill 0 lent an ad") }
            tally.add("parked.timedOut")
        } catch let status as Status where status.code == .deadlineExceeded {
            tally.add("parked.deadline")
        }
    }

    /// A Watch stream read for a while, then cancelled.
    private func watchStreams(_ client: AdLoaderClient) async throws {
        tally.add("call.watch")
        var seen = 0
        let limit = Int.random(in: 10...500)
        for try await _ in client.watch(loader: Bool.random() ? "default" : "") {
            seen += 1
            if seen >= limit { break }
        }
        tally.add("watch.events", seen)
    }

    private func statsCalls(_ client: AdLoaderClient) async throws {
        tally.add("call.stats")
        _ = try await client.stats()
        try await Task.sleep(for: .milliseconds(50))
    }

    /// A connection for one borrow (returned) and closed.
    private func connectionChurn() async {
        while !Task.isCancelled {
            do {
                let client = try AdLoaderClient.connect(to: endpoint)
                tally.add("call.borrow")
                if case .leased(let lease, _) = try await client.borrow(adUnitID: "feed-churn") {
                    try await giveBack(lease, shown: false, client)
                }
                client.close()
                tally.add("connections.churned")
            } catch is CancellationError {
                return
            } catch let status as Status {
                record(status, in: "churn")
            } catch {
                if !Task.isCancelled { tally.unexpected("churn: \(error)") }
            }
        }
    }

    /// The admin endpoints, one connection per request, as a Prometheus scraper and an open
    /// dashboard would.
    private func adminScrapes() async {
        let paths = ["/metrics", "/healthz", "/readyz", "/dashboard.json", "/"]
        var index = 0
        while !Task.isCancelled {
            let path = paths[index % paths.count]
            index += 1
            if let status = AdminRequest.get(path, port: adminPort), status == 200 {
                tally.add("admin.ok")
            } else {
                tally.unexpected("admin: GET \(path) did not answer 200")
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Connections that send random bytes (a bad preface, or the preface and a bad frame),
    /// then read until the daemon closes them.
    private func garbageConnections() async {
        while !Task.isCancelled {
            guard case .tcp(let host, let port) = endpoint else { return }
            var bytes: [UInt8] = Bool.random() ? [] : Array(ProtocolPreface.bytes)
            bytes += (0..<Int.random(in: 1...4_096)).map { _ in UInt8.random(in: 0...255) }
            if GarbageConnection.send(bytes, host: host, port: port) {
                tally.add("connections.garbage")
            } else {
                tally.unexpected("garbage: the daemon did not close a garbage connection within 30 s")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
