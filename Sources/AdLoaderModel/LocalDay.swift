public import AdLoaderTime

/// A calendar day in a device's time zone, computed from an instant and the device's UTC
/// offset: the key daily app-open caps are counted under.
///
/// The core reads no time-zone database: the device sends its current UTC offset (it knows
/// its zone and daylight saving), and the day is the proleptic Gregorian date of
/// `instant + offset`. When a device's offset changes during a day (a daylight-saving switch,
/// travel), the day is whatever date its current offset gives: a switch that keeps the date
/// keeps the day and its count; one that crosses midnight moves to the other date's count.
public struct LocalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The most an offset may be east or west of UTC (UTC-14:00...UTC+14:00 exist; a little margin).
    public static let maximumOffsetSeconds = 18 * 3600

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int64

    public init(daysSinceEpoch: Int64) { self.daysSinceEpoch = daysSinceEpoch }

    /// The day `instant` falls on at UTC offset `utcOffsetSeconds` (east positive).
    public init(at instant: AdInstant, utcOffsetSeconds: Int) {
        let localMilliseconds = instant.unixMilliseconds &+ Int64(utcOffsetSeconds) &* 1_000
        daysSinceEpoch = Self.floorDivide(localMilliseconds, 86_400_000)
    }

    /// The instant this day starts at UTC offset `utcOffsetSeconds`.
    public func start(utcOffsetSeconds: Int) -> AdInstant {
        AdInstant(unixMilliseconds: daysSinceEpoch &* 86_400_000 &- Int64(utcOffsetSeconds) &* 1_000)
    }

    /// The instant the next day starts at UTC offset `utcOffsetSeconds`.
    public func end(utcOffsetSeconds: Int) -> AdInstant {
        LocalDay(daysSinceEpoch: daysSinceEpoch + 1).start(utcOffsetSeconds: utcOffsetSeconds)
    }

    /// The civil date (year, month 1...12, day 1...31): Howard Hinnant's `civil_from_days`.
    public var date: (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = Self.floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// "YYYY-MM-DD", the form stores key days by.
    public var description: String {
        let (year, month, day) = date
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: LocalDay, rhs: LocalDay) -> Bool { lhs.daysSinceEpoch < rhs.daysSinceEpoch }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
