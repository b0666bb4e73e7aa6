/// Why an app asks whether to show an app-open ad.
public enum AppOpenEvent: Hashable, Sendable, CustomStringConvertible {
    /// The app process started (a cold start).
    case launch
    /// The app came back to the foreground from the background (a warm or hot start).
    case foreground

    public var description: String {
        switch self {
        case .launch: "launch"
        case .foreground: "foreground"
        }
    }
}
