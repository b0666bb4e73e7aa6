import AdLoaderConformance
import Testing

@Suite struct ConformanceReportTests {
    private let report = ConformanceReport(results: [
        .init(name: "preface.answered", passed: true, detail: "server answered", duration: .milliseconds(3)),
        .init(
            name: "borrow.slot-affinity", passed: false, detail: "expected REUSED, got LEASED", duration: .seconds(1)),
        .init(name: "limits.idle-timeout", passed: true, skipped: true, detail: "no idleTimeout given"),
    ])

    @Test func failsWhenAnyCheckFails() {
        #expect(!report.passed)
        #expect(report.failures.map(\.name) == ["borrow.slot-affinity"])
        #expect(
            ConformanceReport(results: [report.results[0], report.results[2]]).passed, "skipped checks do not fail")
        #expect(ConformanceReport(results: []).passed)
    }

    @Test func summaryCountsEachVerdict() {
        #expect(report.summary == "3 checks: 1 passed, 1 failed, 1 skipped")
    }

    @Test func linesShowVerdictNameDurationAndDetail() {
        let lines = report.description.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("PASS  preface.answered "))
        #expect(lines[0].contains(" 3 ms  server answered"))
        #expect(lines[1].hasPrefix("FAIL  borrow.slot-affinity "))
        #expect(lines[1].hasSuffix("1000 ms  expected REUSED, got LEASED"))
        #expect(lines[2].hasPrefix("SKIP  limits.idle-timeout "))
        #expect(lines[3] == report.summary)
        // Names line up in one column.
        #expect(Set(lines.prefix(3).map { $0.firstRange(of: " ms")!.lowerBound.utf16Offset(in: $0) }).count <= 2)
    }

    @Test func jsonEscapesEveryDetail() {
        let tricky = ConformanceReport(results: [
            .init(
                name: "a", passed: false, detail: "quote \" backslash \\ newline \n tab \t bell \u{7} é",
                duration: .milliseconds(12))
        ])
        #expect(
            tricky.json
                == #"{"passed":false,"summary":"1 checks: 0 passed, 1 failed, 0 skipped","results":[{"name":"a","verdict":"FAIL","passed":false,"skipped":false,"detail":"quote \" backslash \\ newline \n tab \t bell \u0007 é","duration_ms":12}]}"#
        )
    }
}
