/// SHOWs decided and not yet confirmed or released, counted per device session and per
/// device day: what ``AppOpenCoordinator`` adds to a store's confirmed counts before it
/// decides, so that two decisions in flight for one device cannot both pass a cap.
///
/// Bounded by the app-open leases open: each reservation belongs to one, and ends with it
/// at the latest. An entry whose count falls to 0 is removed.
///
/// - Important: loop-confined.
struct AppOpenReservations {
    private struct SessionKey: Hashable {
        var loader: String
        var deviceID: String
        var sessionID: String
    }

    private struct DayKey: Hashable {
        var loader: String
        var deviceID: String
        var day: LocalDay
    }

    private var sessions: [SessionKey: Int] = [:]
    private var days: [DayKey: Int] = [:]
    /// Reservations held, all devices together.
    private(set) var count = 0

    /// The reservations of `key`'s session and of its day.
    func counts(for key: CapKey) -> AppOpenCounts {
        guard count > 0 else { return AppOpenCounts() }
        return AppOpenCounts(
            session: sessions[Self.sessionKey(key)] ?? 0, day: days[Self.dayKey(key)] ?? 0)
    }

    mutating func add(_ key: CapKey) {
        sessions[Self.sessionKey(key), default: 0] += 1
        days[Self.dayKey(key), default: 0] += 1
        count += 1
    }

    mutating func remove(_ key: CapKey) {
        let session = Self.sessionKey(key)
        let day = Self.dayKey(key)
        guard let sessionCount = sessions[session], let dayCount = days[day] else {
            assertionFailure("a reservation released twice")
            return
        }
        sessions[session] = sessionCount > 1 ? sessionCount - 1 : nil
        days[day] = dayCount > 1 ? dayCount - 1 : nil
        count -= 1
    }

    private static func sessionKey(_ key: CapKey) -> SessionKey {
        SessionKey(loader: key.loader, deviceID: key.deviceID, sessionID: key.sessionID)
    }

    private static func dayKey(_ key: CapKey) -> DayKey {
        DayKey(loader: key.loader, deviceID: key.deviceID, day: key.day)
    }
}
