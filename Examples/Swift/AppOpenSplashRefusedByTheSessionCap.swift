// Swift App-open Splash refused by the session cap
//
// Shows: `maximumShowsPerSession` (1 for loader "appopen"): once an app-open ad was shown
// (returned shown) in a session, later starts of that session are SKIP, reason
// SESSION_CAP_REACHED, flag `sessionCapReached`; a new session may show again.
// Look at: the session id of each request; `counts.session` and the flags.
// Run: adloader examples run swift-app-open-splash-refused-by-the-session-cap
import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

enum AppOpenSplashRefusedByTheSessionCap {
    static let example = Example(.swift, .appOpen, "Splash refused by the session cap") { run in
        let client = run.client
        let adUnit = "splash-\(run.id)"
        let device = "device-\(run.id)"
        _ = try await client.prefetch(adUnitID: adUnit, loader: "appopen")

        func launch(session: String) async throws -> AppOpenResponseMessage {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(3)
            while true {  // a splash screen waits a little for the pool's first ads
                let answer = try await client.appOpen(
                    AppOpenRequest(deviceID: device, sessionID: session, event: .launch), adUnitID: adUnit,
                    loader: "appopen")
                if answer.outcome != .noAdReady || clock.now >= deadline {
                    run.log(
                        "\(session): \(answer.outcome), \(answer.reason.map { "\($0)" } ?? "?"), session count \(answer.counts.session)"
                    )
                    return answer
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        let first = try await launch(session: "session-1")
        guard first.outcome == .show, let lease = first.lease else { throw ExampleFailure("the first start shows") }
        _ = try await client.returnLease(lease.id, shown: true)  // displayed: the session's count is now 1

        let second = try await launch(session: "session-1")
        try run.expect(second.outcome == .skip && second.reason == .sessionCapReached, "the session's cap refuses")
        try run.expect(second.flags.sessionCapReached && second.counts.session == 1, "flag and count say why")

        let nextSession = try await launch(session: "session-2")
        try run.expect(nextSession.outcome == .show, "a new session shows again")
        if let lease = nextSession.lease { _ = try await client.returnLease(lease.id, shown: false) }
    }
}
