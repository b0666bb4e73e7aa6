import AdLoaderCore
import AdLoaderJSON
import AdLoaderOperations
import AdLoaderTestSupport
import Testing

@testable import AdLoaderDaemon
@testable import AdLoaderLogging

/// The failing / stopped-filling warnings and their rate limit, on a manual clock.
@Suite struct DemandSourceLogTests {
    private let handler = CapturingLogHandler()
    private let clock = ManualClock()
    private var log: DemandSourceLog {
        DemandSourceLog(logger: Logger(level: .debug, handler: handler), clock: clock, interval: .seconds(10))
    }

    private func messages() throws -> [[String: JSONValue]] {
        try handler.lines.map { line in
            guard case .object(let members) = try JSONValue.parse(line) else { return [:] }
            return Dictionary(members, uniquingKeysWith: { $1 })
        }
    }

    private func number(_ value: JSONValue?) -> Double? {
        guard case .number(let number, _) = value else { return nil }
        return number
    }

    private static let failure = Result<[DeliveredAd], UpstreamError>.failure(
        UpstreamError(code: .retryable, message: "HTTP 500"))
    private static let empty = Result<[DeliveredAd], UpstreamError>.success([])

    @Test func aFailingSourceWarnsAtOnceThenOncePerIntervalCountingTheFailuresBetween() throws {
        let log = self.log
        for _ in 0..<50 { log.record(source: "rtb", result: Self.failure, asked: 2) }
        #expect(handler.lines.count == 1)
        clock.advance(by: .milliseconds(9_999))
        log.record(source: "rtb", result: Self.failure, asked: 2)
        #expect(handler.lines.count == 1)
        clock.advance(by: .milliseconds(1))
        log.record(source: "rtb", result: Self.failure, asked: 2)
        let lines = try messages()
        #expect(lines.count == 2)
        #expect(lines[0]["message"] == .string("demand source failing"))
        #expect(lines[0]["level"] == .string("warning"))
        #expect(lines[0]["class"] == .string("retryable"))
        #expect(lines[0]["error"] == .string("HTTP 500"))
        #expect(number(lines[0]["failures"]) == 1)
        #expect(number(lines[1]["failures"]) == 51)  // 49 + 1 + 1 since the first warning
        #expect(number(lines[1]["failuresSinceRecovery"]) == 52)
    }

    @Test func eachClassAndEachSourceHasItsOwnLimit() throws {
        let log = self.log
        let unreachable = Result<[DeliveredAd], UpstreamError>.failure(
            UpstreamError(code: .unreachable, message: "refused"))
        log.record(source: "a", result: Self.failure, asked: 1)
        log.record(source: "a", result: unreachable, asked: 1)
        log.record(source: "b", result: Self.failure, asked: 1)
        log.record(source: "a", result: Self.failure, asked: 1)
        let lines = try messages()
        #expect(lines.map { $0["source"] } == [.string("a"), .string("a"), .string("b")])
        #expect(lines.map { $0["class"] } == [.string("retryable"), .string("unreachable"), .string("retryable")])
    }

    @Test func fiveEmptyAnswersInARowAreStoppedFillingAndAnAdIsRecovered() throws {
        let log = self.log
        for _ in 0..<4 { log.record(source: "rtb", result: Self.empty, asked: 3) }
        #expect(handler.lines.isEmpty)  // a no-bid now and then is ordinary
        log.record(source: "rtb", result: Self.empty, asked: 3)
        log.record(source: "rtb", result: Self.empty, asked: 3)
        let ad = DeliveredAd(creative: .native(NativeAdContent(headline: "h")))
        log.record(source: "rtb", result: .success([ad]), asked: 3)
        let lines = try messages()
        #expect(
            lines.map { $0["message"] } == [
                .string("demand source stopped filling"), .string("demand source recovered"),
            ])
        #expect(number(lines[0]["emptyAnswersInARow"]) == 5)
        #expect(lines[1]["after"] == .string("noFill"))
        #expect(lines[1]["level"] == .string("info"))
        // Recovered: the next failure warns at once again.
        log.record(source: "rtb", result: Self.failure, asked: 3)
        #expect(try messages().count == 3)
    }

    @Test func aSingleFailureWarnsAtOnceAndTheNextAdRecovers() throws {
        let log = self.log
        log.record(source: "rtb", result: Self.failure, asked: 1)
        let ad = DeliveredAd(creative: .native(NativeAdContent(headline: "h")))
        log.record(source: "rtb", result: .success([ad]), asked: 1)
        log.record(source: "rtb", result: Self.failure, asked: 1)
        let lines = try messages()
        #expect(
            lines.map { $0["message"] } == [
                .string("demand source failing"), .string("demand source recovered"), .string("demand source failing"),
            ])
    }
}

@Suite struct ReadinessLogTests {
    @Test func logsEachChangeOnceWithItsReason() throws {
        let handler = CapturingLogHandler()
        var state: (ready: Bool, reasons: [String]) = (true, [])
        let log = ReadinessLog(logger: Logger(level: .info, handler: handler)) { state }
        log.baseline()
        log.check()
        #expect(handler.lines.isEmpty)
        state = (false, ["every demand source unreachable (rtb)"])
        log.check()
        log.check()
        state = (false, ["draining", "every demand source unreachable (rtb)"])
        log.check()
        state = (true, [])
        log.check()
        #expect(handler.lines.count == 3)
        #expect(handler.lines[0].contains(#""message":"not ready","reason":"every demand source unreachable (rtb)""#))
        #expect(handler.lines[1].contains(#""reason":"draining; every demand source unreachable (rtb)""#))
        #expect(
            handler.lines[2].contains(#""message":"ready","was":"draining; every demand source unreachable (rtb)""#))
    }
}
