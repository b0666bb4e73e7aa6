/// Whose app-open counts a ``CapStore`` reads or moves: one device's session and local day,
/// under one loader (each loader has its own policy and counts).
public struct CapKey: Hashable, Sendable {
    public var loader: String
    public var deviceID: String
    public var sessionID: String
    /// The device's day, from its UTC offset (``LocalDay``).
    public var day: LocalDay
    /// The offset the day was computed with: stores that expire a day's count do so after
    /// the day ends at this offset (plus a margin for a later offset change).
    public var utcOffsetSeconds: Int

    public init(loader: String, deviceID: String, sessionID: String, day: LocalDay, utcOffsetSeconds: Int) {
        self.loader = loader
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.day = day
        self.utcOffsetSeconds = utcOffsetSeconds
    }
}
