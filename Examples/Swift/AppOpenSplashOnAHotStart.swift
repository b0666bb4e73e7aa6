// Swift App-open Splash on a hot start
//
// Shows: the app returns to the foreground. The policy shows an app-open ad only after the
// app was in the background at least `backgroundThreshold` (300 s here), and never when the
// return comes from unlocking the screen: a quick app switch or an unlock is SKIP, a return
// after 10 minutes is SHOW (HOT_START). Every answer reports the flags it used.
// Look at: `event: .foreground`, `backgroundDuration`, `fromUnlock`; reason and
// `flags.thresholdReached` of each answer.
// Run: adloader examples run swift-app-open-splash-on-a-hot-start
import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

enum AppOpenSplashOnAHotStart {
    static let example = Example(.swift, .appOpen, "Splash on a hot start") { run in
        let client = run.client
        let adUnit = "resume-\(run.id)"
        _ = try await client.prefetch(adUnitID: adUnit, loader: "appopen")

        func foreground(after background: Duration, fromUnlock: Bool = false) async throws -> AppOpenResponseMessage {
            let request = AppOpenRequest(
                deviceID: "device-\(run.id)", sessionID: "session-1", event: .foreground,
                backgroundDuration: background,
                fromUnlock: fromUnlock)
            let answer = try await client.appOpen(request, adUnitID: adUnit, loader: "appopen")
            run.log(
                "after \(background)\(fromUnlock ? " (unlock)" : ""): \(answer.outcome), \(answer.reason.map { "\($0)" } ?? "?")"
            )
            return answer
        }

        let quickSwitch = try await foreground(after: .seconds(20))
        try run.expect(quickSwitch.outcome == .skip && quickSwitch.reason == .belowThreshold, "20 s away: skip")
        try run.expect(!quickSwitch.flags.thresholdReached, "the threshold flag says why")

        let unlock = try await foreground(after: .seconds(3600), fromUnlock: true)
        try run.expect(unlock.outcome == .skip && unlock.reason == .fromUnlock, "an unlock: skip")

        // Back after 10 minutes; the pool may still be filling (prefetch above), so allow a retry.
        var answer = try await foreground(after: .seconds(600))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        while answer.outcome == .noAdReady, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            answer = try await foreground(after: .seconds(600))
        }
        try run.expect(answer.outcome == .show && answer.reason == .hotStart, "10 min away: show, hot start")
        try run.expect(answer.flags.thresholdReached, "threshold reached")
        guard let lease = answer.lease else { throw ExampleFailure("SHOW without a lease") }
        _ = try await client.returnLease(lease.id, shown: true)
    }
}
