import Foundation
import Testing

extension EndToEnd {
    /// The README's first session, typed with the real `adloader` CLI (and so the
    /// AdLoaderClient library) against the real daemon.
    @Suite("adloader CLI against adloaderd")
    struct CommandLineTests {
        let daemon: DaemonProcess
        let endpoint: String

        init() throws {
            daemon = try DaemonProcess(["--synthetic-latency", "5ms"])
            endpoint = "127.0.0.1:\(daemon.port)"
        }

        func adloader(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
            try DaemonProcess.runToExit(
                ["--endpoint", endpoint] + arguments, binary: DaemonProcess.executableURL(named: "adloader"))
        }

        func json(_ text: String) throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }

        @Test func theFirstSessionWorksAsTheReadmeShowsIt() throws {
            let prefetch = try adloader("prefetch", "demo")
            #expect(prefetch.status == 0)
            #expect(prefetch.stdout.hasPrefix("available 0, in flight 5, requested now 5"))  // demand sizing: one batch

            let borrow = try adloader("borrow", "demo", "--slot", "feed-1/position-3", "--wait", "2000")
            #expect(borrow.status == 0, "\(borrow.stderr)")
            #expect(borrow.stdout.hasPrefix("leased lease "))
            let again = try adloader("--json", "borrow", "demo", "--slot", "feed-1/position-3")
            let lease = try #require(try json(again.stdout)["lease"] as? [String: Any])
            #expect(try json(again.stdout)["outcome"] as? String == "BORROW_OUTCOME_REUSED")
            let leaseID = try #require(lease["leaseId"] as? String)
            #expect(borrow.stdout.hasPrefix("leased lease \(leaseID) for slot feed-1/position-3"))

            let returned = try adloader("return", leaseID, "--shown")
            #expect(returned.status == 0)
            #expect(returned.stdout.contains("consumed"))

            let stats = try json(try adloader("--json", "stats").stdout)
            let pools = try #require(stats["pools"] as? [[String: Any]])
            #expect(pools.count == 1)
            #expect(pools.first?["adUnitId"] as? String == "demo")
            // The proto3 JSON mapping: uint64 counters are strings, uint32 gauges numbers.
            #expect(pools.first?["consumed"] as? String == "1")
            #expect(pools.first?["leased"] as? Int == 0)
            #expect(pools.first?["borrowHits"] as? String == "2")
        }

        @Test func errorsAreClearAndExitNonZero() throws {
            let unknownLease = try adloader("return", "12345")
            #expect(unknownLease.status == 1)
            #expect(unknownLease.stderr.contains("NOT_FOUND"))
            #expect(unknownLease.stderr.contains("lease_id"))

            let unknownLoader = try adloader("borrow", "demo", "--loader", "nope")
            #expect(unknownLoader.status == 1)
            #expect(unknownLoader.stderr.contains("INVALID_ARGUMENT"))
            #expect(unknownLoader.stderr.contains("loader"))

            let badCommand = try adloader("lend", "demo")
            #expect(badCommand.status == 2)

            let nobody = try DaemonProcess.runToExit(
                ["--endpoint", "127.0.0.1:1", "stats"], binary: DaemonProcess.executableURL(named: "adloader"))
            #expect(nobody.status == 3)
        }

        @Test func conformanceCommandPassesAgainstTheDaemon() throws {
            // A loader that never fills makes the parking checks deterministic.
            let parking = try DaemonProcess(config: parkingConfig)
            let run = try DaemonProcess.runToExit(
                ["--endpoint", "127.0.0.1:\(parking.port)", "conformance", "--parking-loader", "empty", "--json"],
                binary: DaemonProcess.executableURL(named: "adloader"))
            #expect(run.status == 0, "\(run.stdout)")
            let report = try json(run.stdout)
            #expect(report["passed"] as? Bool == true)
            let results = try #require(report["results"] as? [[String: Any]])
            #expect(results.count > 30)
        }
    }
}
