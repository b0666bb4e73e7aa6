/// When an app start or return to the foreground should show an app-open ad: a loader's
/// settings, with the device library's defaults, and the pure decision over them.
///
/// The decision reads no clock and no store: the caller passes the counts its store holds
/// and the time, so the same inputs always give the same ``AppOpenDecision``.
public struct AppOpenPolicy: Hashable, Sendable {
    /// Show on the app's first launch on a device (the install's first process launch).
    public var showOnFirstLaunch: Bool = true
    /// Show on a launch that is not the first: a cold start (a new process) of a later run.
    /// Returns to the foreground (hot starts) are not launches and do not depend on it.
    public var showOnColdStart: Bool = true
    /// A return to the foreground counts as a hot start (and may show) after at least this
    /// long in the background.
    public var backgroundThreshold: Duration = .seconds(300)
    /// Never show on a return that came from unlocking the screen.
    public var excludeUnlockReturns: Bool = true
    /// The most confirmed shows per app session; nil = unlimited.
    public var maximumShowsPerSession: Int? = nil
    /// The most confirmed shows per calendar day in the device's time zone; nil = unlimited.
    public var maximumShowsPerDay: Int? = nil
    /// A session without an AppOpen call or a confirmed show for this long ends, and its
    /// count with it.
    public var sessionTimeout: Duration = .seconds(1800)
    /// How long a SHOW counts against the caps before its shown Return confirms it: a SHOW is
    /// reserved when decided, so that two decisions in flight for one device cannot both pass
    /// a cap; the reservation ends when the show is confirmed (the store's count then holds
    /// it), when its lease ends without a shown Return, or after this long, whichever comes
    /// first. A shown Return after this still counts the show.
    public var reservationTimeout: Duration = .seconds(60)

    public init() {}

    /// Decides for `request` given the device's `counts` (confirmed shows so far in its
    /// session and on `day`) and its `reserved` shows (decided, not yet confirmed or released).
    ///
    /// Order: the event's own rule (first launch, cold start, hot start after the threshold,
    /// not from unlock), then the session cap, then the daily cap; a cap is reached when
    /// confirmed plus reserved shows reach it. Every flag is computed whatever decided, so
    /// that a client can apply its own filter on top.
    public func decide(
        _ request: AppOpenRequest, counts: AppOpenCounts, reserved: AppOpenCounts = AppOpenCounts(), day: LocalDay
    ) -> AppOpenDecision {
        let thresholdReached = request.backgroundDuration >= backgroundThreshold
        let sessionCapReached = maximumShowsPerSession.map { counts.session + reserved.session >= $0 } ?? false
        let dailyCapReached = maximumShowsPerDay.map { counts.day + reserved.day >= $0 } ?? false
        let flags = AppOpenDecision.Flags(
            firstLaunch: request.isFirstLaunch, coldStart: request.event == .launch && !request.isFirstLaunch,
            thresholdReached: thresholdReached, sessionCapReached: sessionCapReached,
            dailyCapReached: dailyCapReached, fromUnlock: request.fromUnlock)
        let eventReason: AppOpenDecision.Reason
        switch request.event {
        case .launch:
            if request.isFirstLaunch {
                eventReason = showOnFirstLaunch ? .firstLaunch : .firstLaunchExcluded
            } else {
                eventReason = showOnColdStart ? .coldStart : .coldStartExcluded
            }
        case .foreground:
            if request.fromUnlock && excludeUnlockReturns {
                eventReason = .fromUnlock
            } else if !thresholdReached {
                eventReason = .belowThreshold
            } else {
                eventReason = .hotStart
            }
        }
        let reason: AppOpenDecision.Reason =
            if !eventReason.shows { eventReason } else if sessionCapReached {
                .sessionCapReached
            } else if dailyCapReached { .dailyCapReached } else { eventReason }
        return AppOpenDecision(reason: reason, flags: flags, counts: counts, reserved: reserved, day: day)
    }

    /// Checks every field; the error names the first one out of range.
    /// - Parameter prefix: the settings' path, e.g. "loaders.splash.appOpen".
    /// - Throws: ``ConfigError`` naming the setting.
    public func validate(prefix: String) throws(ConfigError) {
        if backgroundThreshold < .zero {
            throw ConfigError(field: "\(prefix).backgroundThreshold", message: "must not be negative")
        }
        if let cap = maximumShowsPerSession, cap < 0 {
            throw ConfigError(field: "\(prefix).maximumShowsPerSession", message: "must not be negative, got \(cap)")
        }
        if let cap = maximumShowsPerDay, cap < 0 {
            throw ConfigError(field: "\(prefix).maximumShowsPerDay", message: "must not be negative, got \(cap)")
        }
        if sessionTimeout <= .zero {
            throw ConfigError(field: "\(prefix).sessionTimeout", message: "must be positive")
        }
        if reservationTimeout <= .zero {
            throw ConfigError(field: "\(prefix).reservationTimeout", message: "must be positive")
        }
    }
}
