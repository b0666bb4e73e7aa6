// Swift App-open Splash on first launch
//
// Shows: the app's very first launch. The splash screen prefetches the app-open pool, waits
// (bounded) for an ad, then asks AppOpen: the policy answers SHOW, reason FIRST_LAUNCH, with
// a lease. Counts move only when the ad was really displayed: Return with `shown: true`.
// Look at: `AppOpenRequest` (device, session, event, isFirstLaunch, utcOffsetSeconds); the
// answer's reason, flags and counts; the full-screen creative of the lent ad.
// Run: adloader examples run swift-app-open-splash-on-first-launch
//      (loader "appopen" in Examples/adloaderd.json: at most 1 show per session, 2 per day)
import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

enum AppOpenSplashOnFirstLaunch {
    static let example = Example(.swift, .appOpen, "Splash on first launch") { run in
        let client = run.client
        let adUnit = "splash-\(run.id)"
        let device = "device-\(run.id)"

        // The splash screen starts loading ads for itself and waits for one, at most 3 s.
        _ = try await client.prefetch(adUnitID: adUnit, loader: "appopen")
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        while try await client.stats(loader: "appopen", adUnitID: adUnit).first?.available ?? 0 == 0,
            clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }

        let request = AppOpenRequest(
            deviceID: device, sessionID: "session-1", event: .launch, isFirstLaunch: true, utcOffsetSeconds: 2 * 3600)
        let answer = try await client.appOpen(request, adUnitID: adUnit, loader: "appopen")
        run.log(
            "\(answer.outcome): \(answer.reason.map { "\($0)" } ?? "?"), counts so far \(answer.counts.session)/\(answer.counts.day) on \(answer.day)"
        )
        try run.expect(answer.outcome == .show && answer.reason == .firstLaunch, "show on first launch")
        try run.expect(
            answer.flags.firstLaunch && answer.counts == AppOpenCounts(session: 0, day: 0), "first launch, no shows yet"
        )

        guard let lease = answer.lease, let creative = lease.ad.creative.fullScreenCreative else {
            throw ExampleFailure("SHOW without a full-screen ad")
        }
        run.log("ad \(lease.ad.id): \(lease.ad.format), \(creative.width)×\(creative.height)")
        try run.expect(lease.ad.format == .appOpen, "an app-open ad")

        // Displayed: now the device's counts move (session 1, day 1).
        _ = try await client.returnLease(lease.id, shown: true)
        let next = try await client.appOpen(
            AppOpenRequest(deviceID: device, sessionID: "session-2", event: .launch, utcOffsetSeconds: 2 * 3600),
            adUnitID: adUnit, loader: "appopen")
        try run.expect(next.counts.day == 1, "the shown ad counts for the day, got \(next.counts.day)")
        if let lease = next.lease { _ = try await client.returnLease(lease.id, shown: false) }
    }
}
