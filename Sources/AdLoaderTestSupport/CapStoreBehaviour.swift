public import AdLoaderCore

/// The behaviour every ``CapStore`` must have, as named checks that the tests of each store
/// (in-memory, SQLite, Redis) run the same way.
///
/// Each check opens stores with `open` (every call opens the same underlying counts: the
/// same file, the same Redis database), uses its own loader name so that checks sharing a
/// store do not see each other's counts, and returns its failures (empty when it passed).
/// A store that answers later (a worker thread's) passes `settle`, which must run its
/// completions (waiting, with a bound, for them to be ready).
public enum CapStoreBehaviour {
    public typealias Open = () throws -> any CapStore

    /// 2026-12-01T10:00:00Z.
    static let start = AdInstant(unixMilliseconds: 1_796_119_200_000)
    static let timeout = Duration.seconds(1800)

    /// The names of the checks, for `@Test(arguments:)`.
    public static var names: [String] { allChecks.map(\.name) }

    static var allChecks: [Check] { checks + reservationChecks }

    /// Runs the check called `name`; `persistent` stores must keep counts across reopening.
    /// - Returns: the failures, empty when the store behaved.
    public static func run(
        _ name: String, persistent: Bool, settle: @escaping () -> Void = {}, open: @escaping Open
    ) -> [String] {
        guard let check = allChecks.first(where: { $0.name == name }) else { return ["no check \(name)"] }
        var context = Context(
            loader: "behaviour-\(name)-\(UInt64.random(in: 0...UInt64.max))", open: open, settle: settle)
        do {
            try check.body(&context, persistent)
        } catch {
            context.failures.append("\(name): \(error)")
        }
        return context.failures
    }

    struct Context {
        var loader: String
        var open: Open
        var settle: () -> Void
        var failures: [String] = []

        func key(device: String = "device", session: String = "s1", at instant: AdInstant, offset: Int = 0) -> CapKey {
            CapKey(
                loader: loader, deviceID: device, sessionID: session,
                day: LocalDay(at: instant, utcOffsetSeconds: offset),
                utcOffsetSeconds: offset)
        }

        mutating func expect(_ condition: Bool, _ what: String) {
            if !condition { failures.append(what) }
        }

        /// Calls the store and returns what its completion gave (settling the store first when
        /// it has not answered yet).
        func counts(_ store: any CapStore, _ key: CapKey, at now: AdInstant, confirm: Bool = false) throws
            -> AppOpenCounts
        {
            var result: Result<AppOpenCounts, CapStoreError>?
            if confirm {
                store.confirmShow(for: key, at: now, sessionTimeout: CapStoreBehaviour.timeout) { result = $0 }
            } else {
                store.counts(for: key, at: now, sessionTimeout: CapStoreBehaviour.timeout) { result = $0 }
            }
            if result == nil { settle() }
            guard let result else { throw CapStoreError("the store did not answer (after settling)") }
            return try result.get()
        }
    }

    struct Check: Sendable {
        var name: String
        var body: @Sendable (inout Context, Bool) throws -> Void
    }

    static let checks: [Check] = [
        Check(name: "new-device-counts-zero") { c, _ in
            let store = try c.open()
            defer { store.close() }
            let n = try c.counts(store, c.key(at: start), at: start)
            c.expect(n == AppOpenCounts(), "a new device: \(n), expected 0/0")
        },
        Check(name: "confirm-moves-session-and-day") { c, _ in
            let store = try c.open()
            defer { store.close() }
            let k = c.key(at: start)
            let one = try c.counts(store, k, at: start, confirm: true)
            let two = try c.counts(store, k, at: start + .seconds(1), confirm: true)
            let read = try c.counts(store, k, at: start + .seconds(2))
            c.expect(one == AppOpenCounts(session: 1, day: 1), "first confirm answered \(one)")
            c.expect(two == AppOpenCounts(session: 2, day: 2), "second confirm answered \(two)")
            c.expect(read == two, "read after confirms: \(read)")
        },
        Check(name: "sessions-share-the-day-devices-and-loaders-do-not") { c, _ in
            let store = try c.open()
            defer { store.close() }
            _ = try c.counts(store, c.key(session: "a", at: start), at: start, confirm: true)
            let b = try c.counts(store, c.key(session: "b", at: start), at: start)
            c.expect(b == AppOpenCounts(session: 0, day: 1), "another session of the device: \(b)")
            let other = try c.counts(store, c.key(device: "other", session: "a", at: start), at: start)
            c.expect(other == AppOpenCounts(), "another device: \(other)")
            var otherLoader = c.key(session: "a", at: start)
            otherLoader.loader += "-x"
            let l = try c.counts(store, otherLoader, at: start)
            c.expect(l == AppOpenCounts(), "another loader: \(l)")
        },
        Check(name: "sessions-end-after-inactivity") { c, _ in
            let store = try c.open()
            defer { store.close() }
            let k = c.key(at: start)
            _ = try c.counts(store, k, at: start, confirm: true)
            // Activity (a read) within the timeout keeps the session alive...
            let kept = try c.counts(store, k, at: start + .seconds(1_700))
            let stillKept = try c.counts(store, k, at: start + .seconds(3_400))
            c.expect(
                kept.session == 1 && stillKept.session == 1, "active session lost its count: \(kept), \(stillKept)")
            // ...inactivity for the timeout ends it; the day's count stays.
            let ended = try c.counts(store, k, at: start + .seconds(3_400 + 1_800))
            c.expect(ended == AppOpenCounts(session: 0, day: 1), "after the timeout: \(ended)")
            let next = try c.counts(store, k, at: start + .seconds(5_300), confirm: true)
            c.expect(next == AppOpenCounts(session: 1, day: 2), "a show in the renewed session: \(next)")
        },
        Check(name: "a-new-local-day-starts-at-zero") { c, _ in
            let store = try c.open()
            defer { store.close() }
            // 10:00Z is 23:45 in Chatham (+13:45 in December); 16 minutes later it is the next day there.
            let offset = 49_500
            _ = try c.counts(store, c.key(at: start, offset: offset), at: start, confirm: true)
            let later = start + .seconds(10 * 60)
            let sameDay = try c.counts(store, c.key(at: later, offset: offset), at: later)
            c.expect(sameDay == AppOpenCounts(session: 1, day: 1), "before local midnight: \(sameDay)")
            let next = start + .seconds(16 * 60)
            let nextDay = try c.counts(store, c.key(at: next, offset: offset), at: next)
            c.expect(nextDay == AppOpenCounts(session: 1, day: 0), "after local midnight: \(nextDay)")
            // A day is a date: the device at UTC (10:16Z, still December 1st) counts on the first day.
            let utc = try c.counts(store, c.key(at: next, offset: 0), at: next)
            c.expect(utc.day == 1, "the same date at another offset: \(utc)")
        },
        Check(name: "an-offset-change-within-a-day-keeps-its-count") { c, _ in
            let store = try c.open()
            defer { store.close() }
            // Daylight saving ends: +02:00 becomes +01:00; the date stays, so does the count.
            _ = try c.counts(store, c.key(at: start, offset: 7_200), at: start, confirm: true)
            let later = start + .seconds(3_600)
            let after = try c.counts(store, c.key(at: later, offset: 3_600), at: later)
            c.expect(after.day == 1, "after the offset change: \(after)")
        },
        Check(name: "counts-survive-reopening") { c, persistent in
            var store = try c.open()
            let k = c.key(at: start)
            _ = try c.counts(store, k, at: start, confirm: true)
            _ = try c.counts(store, k, at: start, confirm: true)
            store.close()
            store = try c.open()
            defer { store.close() }
            let again = try c.counts(store, k, at: start + .seconds(60))
            let expected = persistent ? AppOpenCounts(session: 2, day: 2) : AppOpenCounts()
            c.expect(again == expected, "after reopening: \(again), expected \(expected)")
        },
        Check(name: "two-stores-on-the-same-counts-add-up") { c, persistent in
            guard persistent else { return }
            let a = try c.open()
            let b = try c.open()
            defer {
                a.close()
                b.close()
            }
            let k = c.key(at: start)
            for i in 0..<5 {
                _ = try c.counts(i % 2 == 0 ? a : b, k, at: start + .seconds(Int64(i)), confirm: true)
            }
            let read = try c.counts(a, k, at: start + .seconds(10))
            c.expect(read == AppOpenCounts(session: 5, day: 5), "two stores, five confirms: \(read)")
        },
        Check(name: "a-closed-store-fails") { c, _ in
            let store = try c.open()
            store.close()
            var result: Result<AppOpenCounts, CapStoreError>?
            store.counts(for: c.key(at: start), at: start, sessionTimeout: timeout) { result = $0 }
            if result == nil { c.settle() }
            if case .success = result { c.failures.append("a closed store answered counts") }
            if result == nil { c.failures.append("a closed store did not answer") }
        },
    ]
}
