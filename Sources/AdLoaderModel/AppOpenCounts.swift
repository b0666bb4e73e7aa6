/// Confirmed app-open shows of one device: in its current session and on its current day.
public struct AppOpenCounts: Hashable, Sendable {
    public var session: Int
    public var day: Int

    public init(session: Int = 0, day: Int = 0) {
        self.session = session
        self.day = day
    }
}
