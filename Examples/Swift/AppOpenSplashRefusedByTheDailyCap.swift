// Swift App-open Splash refused by the daily cap
//
// Shows: `maximumShowsPerDay` (2 for loader "appopen"): after two shown app-open ads on the
// device's calendar day, every start that day is SKIP, reason DAILY_CAP_REACHED, whatever the
// session. The day is the device's own, from the UTC offset it sends.
// Look at: a new session per start (the session cap of 1 is not what refuses here);
// `counts.day`, `day` and `flags.dailyCapReached`.
// Run: adloader examples run swift-app-open-splash-refused-by-the-daily-cap
import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

enum AppOpenSplashRefusedByTheDailyCap {
    static let example = Example(.swift, .appOpen, "Splash refused by the daily cap") { run in
        let client = run.client
        let adUnit = "splash-\(run.id)"
        let device = "device-\(run.id)"
        _ = try await client.prefetch(adUnitID: adUnit, loader: "appopen")

        func launch(session: String) async throws -> AppOpenResponseMessage {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(3)
            while true {  // a splash screen waits a little for the pool's ads
                let answer = try await client.appOpen(
                    AppOpenRequest(deviceID: device, sessionID: session, event: .launch, utcOffsetSeconds: -5 * 3600),
                    adUnitID: adUnit, loader: "appopen")
                if answer.outcome != .noAdReady || clock.now >= deadline {
                    run.log(
                        "\(session): \(answer.outcome), \(answer.reason.map { "\($0)" } ?? "?"), \(answer.counts.day) on \(answer.day)"
                    )
                    return answer
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        // Two app starts in the morning and at noon, each showing its ad.
        for session in ["morning", "noon"] {
            let answer = try await launch(session: session)
            guard answer.outcome == .show, let lease = answer.lease else { throw ExampleFailure("\(session) shows") }
            _ = try await client.returnLease(lease.id, shown: true)
        }

        // The evening start: the day's cap of 2 is reached.
        let evening = try await launch(session: "evening")
        try run.expect(evening.outcome == .skip && evening.reason == .dailyCapReached, "the daily cap refuses")
        try run.expect(evening.flags.dailyCapReached && evening.counts.day == 2, "flag and count say why")
        try run.expect(!evening.flags.sessionCapReached, "not the session cap: a fresh session")
    }
}
