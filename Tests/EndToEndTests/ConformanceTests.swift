import AdLoaderConformance
import Foundation
import Testing

extension EndToEnd {
    /// The conformance suite of PROTOCOL.md against the real daemon, every limit configured small.
    @Suite("adloaderd conformance", .serialized, .timeLimit(.minutes(1)))
    struct ConformanceTests {
        @Test func everyCheckPassesAgainstTheRealDaemon() throws {
            let config = """
                { "sources": { "synthetic": { "latency": "5ms" }, "empty": { "type": "synthetic", "fillRate": 0 } },
                  "loaders": { "default": {}, "parking": { "source": "empty" }, "appopen": { "format": "appOpen" } },
                  "capStore": { "type": "memory" },
                  "limits": { "maxConnections": 20, "maxParkedBorrows": 50, "maxCallsInFlightPerConnection": 64,
                              "idleTimeout": "1s", "partialFrameTimeout": "500ms", "maxMessageSize": "64KiB",
                              "maxUnsentOutputPerConnection": "64KiB" } }
                """
            let daemon = try DaemonProcess(config: config, environment: ["ADLOADERD_LOG_LEVEL": "info"])
            var options = ConformanceSuite.Options()
            options.parkingLoader = "parking"
            options.limits.maximumMessageSize = 64 * 1024
            options.limits.maximumCallsInFlight = 64
            options.limits.maximumConnections = 20
            options.limits.maximumParkedBorrows = 50
            options.limits.idleTimeout = .seconds(1)
            options.limits.partialFrameTimeout = .milliseconds(500)
            options.limits.checkOutputCap = true
            let report = ConformanceSuite(host: daemon.host, port: daemon.port, options: options).run()
            for result in report.results {
                #expect(result.passed, "\(result.line)")
            }
            #expect(report.results.count == ConformanceSuite.checkNames.count)
            #expect(report.results.filter(\.skipped).isEmpty, "\(report.results.filter(\.skipped).map(\.line))")
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }
    }
}
