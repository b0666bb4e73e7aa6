import AdLoaderLogging
import AdLoaderModel
import AdLoaderTime

/// The outcome of a ``ConformanceSuite`` run: one result per check, in the order they ran.
public struct ConformanceReport: Hashable, Sendable, CustomStringConvertible {
    /// The outcome of one check.
    public struct Result: Hashable, Sendable {
        /// The check's name, e.g. `borrow.slot-affinity`.
        public var name: String
        /// True when the endpoint behaved as PROTOCOL.md says (or the check was skipped).
        public var passed: Bool
        /// True when the check did not run (e.g. a limit the caller did not configure).
        public var skipped: Bool
        /// What was observed, or what was expected and what came instead.
        public var detail: String
        /// How long the check took.
        public var duration: Duration

        public init(name: String, passed: Bool, skipped: Bool = false, detail: String, duration: Duration = .zero) {
            self.name = name
            self.passed = passed
            self.skipped = skipped
            self.detail = detail
            self.duration = duration
        }

        /// "PASS", "FAIL" or "SKIP".
        public var verdict: String { skipped ? "SKIP" : passed ? "PASS" : "FAIL" }

        /// One line: verdict, name, duration, detail.
        public var line: String {
            let padded = name.count < 40 ? name + String(repeating: " ", count: 40 - name.count) : name
            return "\(verdict)  \(padded) \(Self.format(duration))  \(detail)"
        }

        static func format(_ duration: Duration) -> String {
            let text = "\(duration.milliseconds) ms"
            return String(repeating: " ", count: max(0, 8 - text.count)) + text
        }
    }

    /// Every check, in the order they ran.
    public var results: [Result]

    public init(results: [Result]) {
        self.results = results
    }

    /// True when no check failed (skipped checks do not fail a run).
    public var passed: Bool { results.allSatisfy(\.passed) }

    /// The checks that failed.
    public var failures: [Result] { results.filter { !$0.passed } }

    /// "27 checks: 25 passed, 1 failed, 1 skipped".
    public var summary: String {
        let skipped = results.filter(\.skipped).count
        let failed = failures.count
        let passed = results.count - skipped - failed
        return "\(results.count) checks: \(passed) passed, \(failed) failed, \(skipped) skipped"
    }

    /// One line per check, then the summary.
    public var description: String {
        (results.map(\.line) + [summary]).joined(separator: "\n")
    }

    /// The report as a JSON object: `{"passed":…, "summary":…, "results":[{"name":…, "verdict":…,
    /// "passed":…, "skipped":…, "detail":…, "duration_ms":…}]}`.
    public var json: String {
        var json = JSONWriter()
        json.beginObject()
        json.field("passed", passed)
        json.field("summary", summary)
        json.key("results")
        json.beginArray()
        for result in results {
            json.beginObject()
            json.field("name", result.name)
            json.field("verdict", result.verdict)
            json.field("passed", result.passed)
            json.field("skipped", result.skipped)
            json.field("detail", result.detail)
            json.field("duration_ms", result.duration.milliseconds)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.text
    }
}
