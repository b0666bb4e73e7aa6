import AdLoaderCore
import Testing

/// The device's calendar day from an instant and a UTC offset, without a time-zone database.
struct LocalDayTests {
    /// 2026-12-01T00:00:00Z.
    static let decemberFirst = AdInstant(unixMilliseconds: 1_796_083_200_000)

    @Test(arguments: [
        // (ms after 2026-12-01T00:00Z, offset seconds, local date)
        (0, 0, "2026-12-01"),
        (-1, 0, "2026-11-30"),
        (0, -3600, "2026-11-30"),  // Azores / UTC-1: still Nov 30, 23:00
        (3_600_000, -3600, "2026-12-01"),  // 01:00Z = 00:00 at UTC-1
        (3_599_999, -3600, "2026-11-30"),
        (-19_800_000, 19_800, "2026-12-01"),  // India +05:30: 18:30Z on Nov 30 is local midnight
        (-19_800_001, 19_800, "2026-11-30"),
        (-50_400_000, 50_400, "2026-12-01"),  // Kiribati +14:00
        (36_000_000 - 1, -36_000, "2026-11-30"),  // Hawaii -10:00: 10:00Z is local midnight
        (36_000_000, -36_000, "2026-12-01"),
        (-20_700_000, 20_700, "2026-12-01"),  // Nepal +05:45
    ])
    func dayBoundariesInSeveralTimeZones(after: Int64, offset: Int, expected: String) {
        let instant = AdInstant(unixMilliseconds: Self.decemberFirst.unixMilliseconds + after)
        #expect(LocalDay(at: instant, utcOffsetSeconds: offset).description == expected)
    }

    @Test func startAndEndOfADayAtAnOffset() {
        let day = LocalDay(at: Self.decemberFirst, utcOffsetSeconds: 19_800)
        #expect(day.start(utcOffsetSeconds: 19_800) == AdInstant(unixMilliseconds: 1_796_083_200_000 - 19_800_000))
        #expect(day.end(utcOffsetSeconds: 19_800) - day.start(utcOffsetSeconds: 19_800) == .seconds(86_400))
        #expect(
            LocalDay(at: day.end(utcOffsetSeconds: 19_800), utcOffsetSeconds: 19_800).daysSinceEpoch == day
                .daysSinceEpoch + 1)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01"), (-1, "1969-12-31"), (59, "1970-03-01"), (11_016, "2000-02-29"),
        (11_017, "2000-03-01"), (-719_468, "0000-03-01"), (20_423, "2025-12-01"), (2_932_896, "9999-12-31"),
    ])
    func civilDates(days: Int64, expected: String) {
        #expect(LocalDay(daysSinceEpoch: days).description == expected)
    }

    @Test func everyDayOfFourHundredYearsFollowsTheOneBefore() {
        // Walk 1900...2300 and check the calendar's own rules day by day.
        var previous = LocalDay(daysSinceEpoch: -25_567).date  // 1900-01-01
        #expect(previous == (1900, 1, 1))
        func isLeap(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }
        for d in Int64(-25_566)...Int64(120_000) {
            let date = LocalDay(daysSinceEpoch: d).date
            let monthLength = [31, isLeap(previous.year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][
                previous.month - 1]
            let expected: (Int, Int, Int) =
                previous.day < monthLength
                ? (previous.year, previous.month, previous.day + 1)
                : previous.month < 12 ? (previous.year, previous.month + 1, 1) : (previous.year + 1, 1, 1)
            if date != expected {
                Issue.record("day \(d): \(date), expected \(expected)")
                return
            }
            previous = date
        }
    }

    /// A daylight-saving switch changes the offset the device sends: the day follows the
    /// current offset's date.
    @Test func anOffsetChangeAcrossADay() {
        // Europe/Berlin, 2026-10-25: 03:00 CEST (+02:00) becomes 02:00 CET (+01:00) at 01:00Z.
        let switchInstant = AdInstant(unixMilliseconds: 1_792_890_000_000)  // 2026-10-25T01:00Z
        let before = LocalDay(
            at: AdInstant(unixMilliseconds: switchInstant.unixMilliseconds - 1), utcOffsetSeconds: 7_200)
        let after = LocalDay(at: switchInstant, utcOffsetSeconds: 3_600)
        #expect(before.description == "2026-10-25")
        #expect(after == before)
        // 22:30Z on the 25th: 23:30 at +01:00 (the same day) but 00:30 of the 26th at the old +02:00.
        let lateEvening = AdInstant(unixMilliseconds: switchInstant.unixMilliseconds + 77_400_000)
        #expect(LocalDay(at: lateEvening, utcOffsetSeconds: 3_600) == before)
        #expect(LocalDay(at: lateEvening, utcOffsetSeconds: 7_200).description == "2026-10-26")
    }
}
