/// What an app tells the service when it starts or returns to the foreground: the inputs of
/// an ``AppOpenPolicy`` decision besides the counts and the time.
public struct AppOpenRequest: Hashable, Sendable {
    /// Required; counts are kept per device (and loader).
    public var deviceID: String
    /// Required; the app's current session (the app makes a new one per process start, or
    /// reuses one while it considers the session alive). Session counts end after the
    /// policy's ``AppOpenPolicy/sessionTimeout`` of inactivity.
    public var sessionID: String
    public var event: AppOpenEvent
    /// The app has never been launched before on this device.
    public var isFirstLaunch: Bool
    /// Time spent in the background before a ``AppOpenEvent/foreground`` return.
    public var backgroundDuration: Duration
    /// The return to the foreground came from unlocking the screen.
    public var fromUnlock: Bool
    /// The device's current UTC offset in seconds (east positive), which decides its
    /// calendar day (``LocalDay``); within ±``LocalDay/maximumOffsetSeconds``.
    public var utcOffsetSeconds: Int
    /// The device's privacy signals: the app-open ad is lent from the pool of their consent
    /// class (nil: the loader's default class).
    public var privacy: PrivacySignals?

    public init(
        deviceID: String, sessionID: String, event: AppOpenEvent, isFirstLaunch: Bool = false,
        backgroundDuration: Duration = .zero, fromUnlock: Bool = false, utcOffsetSeconds: Int = 0,
        privacy: PrivacySignals? = nil
    ) {
        self.privacy = privacy
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.event = event
        self.isFirstLaunch = isFirstLaunch
        self.backgroundDuration = backgroundDuration
        self.fromUnlock = fromUnlock
        self.utcOffsetSeconds = utcOffsetSeconds
    }
}
