import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire
import Foundation
import Testing

/// A loader whose source never fills: borrows with a wait stay parked.
let parkingConfig = """
    { "sources": { "synthetic": { "latency": "5ms" }, "empty": { "type": "synthetic", "fillRate": 0, "latency": "5ms" } },
      "loaders": { "default": { "maximumRetainedAdvertisements": 10 },
                   "empty": { "source": "empty", "retry": { "delay": "1s" } } } }
    """

extension EndToEnd {
    @Suite("adloaderd lifecycle", .serialized, .timeLimit(.minutes(1)))
    struct DaemonLifecycleTests {
        @Test func printsWhereItListensAndAFirstCommand() throws {
            let daemon = try DaemonProcess()
            #expect(daemon.port > 0)
            #expect(daemon.bannerLines.first == "adloaderd listening on 127.0.0.1:\(daemon.port)")
            #expect(
                daemon.bannerLines.dropFirst().first
                    == "try: adloader --endpoint 127.0.0.1:\(daemon.port) borrow demo --wait 1000")
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
            #expect(daemon.stderrText.contains("\"message\":\"listening\""))
            #expect(daemon.stderrText.contains("\"message\":\"stopped\""))
        }

        @Test func servesTheFirstSessionOnTheDefaults() throws {
            let daemon = try DaemonProcess(["--synthetic-latency", "5ms"])
            let client = try RawConnection.open(port: daemon.port)
            let prefetch = try client.call(
                MethodName.prefetch, PrefetchRequestMessage(adUnitID: "demo"), as: PrefetchResponseMessage.self)
            #expect(prefetch.result.requested == 5)  // a fresh demand-sized pool asks for one batch
            let borrow = try client.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "demo", slot: "feed/1", waitMilliseconds: 2_000),
                as: BorrowResponseMessage.self)
            let lease = try #require(borrow.lease)
            #expect(borrow.outcome == .leased)
            #expect(lease.ad.loader == "default")
            let again = try client.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "demo", slot: "feed/1"),
                as: BorrowResponseMessage.self)
            #expect(again.outcome == .reused)
            #expect(again.lease?.id == lease.id)
            let returned = try client.call(
                MethodName.returnLease, ReturnRequestMessage(leaseID: lease.id, shown: true),
                as: ReturnResponseMessage.self)
            #expect(returned.outcome == .consumed)
            let pools = try client.stats()
            #expect(pools.count == 1)
            #expect(pools.allSatisfy { $0.conservesAds })
            #expect(pools.first?.consumed == 1)
            daemon.signal(SIGINT)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func sigtermEndsAParkedBorrowWithUnavailableAndExitsZero() throws {
            let daemon = try DaemonProcess(config: parkingConfig)
            let client = try RawConnection.open(port: daemon.port)
            let watch = try client.start(MethodName.watch, WatchRequestMessage(loader: "empty"))
            let parked = try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "a", loader: "empty", waitMilliseconds: 30_000))
            // The borrow is parked once Stats (answered after it, on the same connection) counts it.
            let pools = try client.call(
                MethodName.stats, StatsRequestMessage(loader: "empty"), as: StatsResponseMessage.self
            ).pools
            #expect(pools.first?.parkedBorrows == 1)
            daemon.signal(SIGTERM)
            // The call-0 frame announcing the shutdown comes after the open calls' ends: they
            // were read (and kept aside) while waiting for it.
            let announcement = try client.awaitEnd(of: 0)
            #expect(announcement.status.code == .unavailable)
            let borrowEnd = client.takeStashed(for: parked).first { $0.end }
            #expect(borrowEnd?.status.code == .unavailable)
            let watchEnd = client.takeStashed(for: watch).first { $0.end }
            #expect(watchEnd?.status.code == .unavailable)
            client.disconnect()
            #expect(daemon.waitForExit() == 0)
            #expect(!daemon.stderrText.contains("event loop did not close"))
        }

        /// PROTOCOL.md 9: calls that arrive during the grace period are answered UNAVAILABLE;
        /// the connection closes when the client closes it, well before the grace period ends.
        @Test func callsDuringShutdownAreAnsweredUnavailableUntilTheClientCloses() throws {
            let daemon = try DaemonProcess(["--shutdown-grace-period", "30s"], config: parkingConfig)
            let client = try RawConnection.open(port: daemon.port)
            try client.borrowAndReturn()
            let started = ContinuousClock.now
            daemon.signal(SIGTERM)
            #expect(try client.awaitEnd(of: 0).status.code == .unavailable)
            let stats = try client.call(MethodName.stats, StatsRequestMessage()).status
            #expect(stats.code == .unavailable && stats.message == "server shutting down", "\(stats)")
            let borrow = try client.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "healthy", waitMilliseconds: 1_000)
            ).status
            #expect(borrow.code == .unavailable, "\(borrow)")
            client.halfClose()
            #expect(try client.readUntilClosed().isEmpty)
            #expect(daemon.waitForExit(timeout: .seconds(20)) == 0)
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(!daemon.stderrText.contains("grace period ended"))
        }

        /// A client that half-closes after sending its requests still reads every answer;
        /// its parked borrow ends as on a disconnect (PROTOCOL.md 5.5).
        @Test func halfClosingClientGetsItsAnswersThenTheConnectionCloses() throws {
            // Above the ~4 MB of answers (the default, 1 MiB, would pause reading first, and a
            // paused connection reads its end of stream only once the client has read).
            let daemon = try DaemonProcess(["--max-unsent-output", "8MiB"], config: parkingConfig)
            let observer = try RawConnection.open(port: daemon.port)
            _ = try observer.call(
                MethodName.prefetch, PrefetchRequestMessage(adUnitID: "u0"), as: PrefetchResponseMessage.self)
            // Stats of that one pool: an answer of a fixed size, whatever fields pools report.
            let onePool = StatsRequestMessage(loader: "default", adUnitID: "u0")
            let answerSize = try #require(try observer.call(MethodName.stats, onePool).messages.first).count
            let calls = (4 << 20) / (answerSize + 16)
            // A small receive buffer and more answers than the sockets buffer (~4 MiB, under
            // the output limit): answers are still unsent when the end of stream is read.
            let client = try RawConnection.open(port: daemon.port, receiveBuffer: 4096)
            try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "gone", loader: "empty", waitMilliseconds: 20_000))
            var batch: [UInt8] = []
            for id in 2...(calls + 1) {
                RequestFrame(callID: UInt64(id), method: MethodName.stats, request: onePool).appendFrame(to: &batch)
            }
            try client.send(batch)
            client.halfClose()
            // The daemon reads the end of stream while megabytes of answers are still unsent.
            #expect(try daemon.repeatUntilLogged("closed by the client", limit: 5_000) { _ = try observer.stats() })
            let frames = try client.readUntilClosed()
            #expect(Set(frames.map(\.callID)) == Set(2...(UInt64(calls) + 1)), "\(frames.count) answers")
            #expect(frames.allSatisfy { $0.status.code == .ok })
            var parked = -1
            for _ in 0..<2_000 {
                parked = try observer.stats().first { $0.loader == "empty" }?.parkedBorrows ?? -1
                if parked == 0 { break }
            }
            #expect(parked == 0)
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        /// A second daemon on the same Unix socket must not take it from the first.
        @Test func aUnixSocketInUseExitsNonZeroNamingTheSettingAndTheFirstStillServes() throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "adl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
            ).path
            let first = try DaemonProcess(["--unix-socket", path, "--synthetic-latency", "5ms"])
            let result = try DaemonProcess.runToExit(["--port", "0", "--unix-socket", path])
            #expect(result.status == 2)
            #expect(result.stderr.contains("listeners.unixSocket"), "\(result.stderr)")
            #expect(result.stderr.contains("EADDRINUSE"), "\(result.stderr)")
            let client = try RawConnection.open(unixPath: path)
            try client.borrowAndReturn()
            client.disconnect()
            first.signal(SIGTERM)
            #expect(first.waitForExit() == 0)
        }

        @Test func shutdownClosesAClientThatDoesNotReadWithinTheGracePeriod() throws {
            let daemon = try DaemonProcess(["--shutdown-grace-period", "500ms", "--max-unsent-output", "1KiB"])
            let setup = try RawConnection.open(port: daemon.port)
            for unit in 0..<20 {
                _ = try setup.call(
                    MethodName.prefetch, PrefetchRequestMessage(adUnitID: "u\(unit)"), as: PrefetchResponseMessage.self)
            }
            let greedy = try RawConnection.open(port: daemon.port, receiveBuffer: 4096)
            _ = try greedy.floodUntilPaused(daemon)
            let started = ContinuousClock.now
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit(timeout: .seconds(10)) == 0)
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(daemon.stderrText.contains("shutdown grace period ended"))
        }

        @Test(arguments: [
            (["--max-connections", "0"], "limits.maxConnections"),
            (["--port", "70000"], "listeners.port"),
            (["--host", "localhost"], "listeners.host"),
            (["--idle-timeout", "soon"], "limits.idleTimeout"),
            (["--synthetic-fill-rate", "2"], "sources.synthetic.fillRate"),
            (["--no-such-flag", "1"], "--no-such-flag"),
        ])
        func badConfigurationExitsNonZeroNamingTheSetting(arguments: [String], setting: String) throws {
            let result = try DaemonProcess.runToExit(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.contains(setting), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }

        @Test func badConfigurationFileNamesTheSetting() throws {
            let result = try DaemonProcess.runToExit(
                [], config: #"{ "loaders": { "default": { "numberOfAdvertisements": 9 } } }"#)
            #expect(result.status == 2)
            #expect(result.stderr.contains("loaders.default.numberOfAdvertisements"), "\(result.stderr)")
            let env = try DaemonProcess.runToExit([], environment: ["ADLOADERD_MAX_PARKED_BORROWS": "-1"])
            #expect(env.status == 2)
            #expect(env.stderr.contains("limits.maxParkedBorrows"), "\(env.stderr)")
        }

        @Test func aPortInUseExitsNonZeroNamingTheSetting() throws {
            let daemon = try DaemonProcess()
            let result = try DaemonProcess.runToExit(["--port", String(daemon.port)])
            #expect(result.status == 2)
            #expect(result.stderr.contains("listeners.port"), "\(result.stderr)")
            #expect(result.stderr.contains("EADDRINUSE"), "\(result.stderr)")
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func helpDocumentsEverySettingWithItsDefault() throws {
            let result = try DaemonProcess.runToExit(["--help"])
            #expect(result.status == 0)
            for flag in [
                "--host", "--port", "--unix-socket", "--config", "--max-message-size", "--max-connections",
                "--max-calls-in-flight", "--max-parked-borrows", "--idle-timeout", "--partial-frame-timeout",
                "--max-unsent-output", "--shutdown-grace-period", "--log-level", "ADLOADERD_PORT", "7411",
            ] {
                #expect(result.stdout.contains(flag), "--help lacks \(flag)")
            }
        }

        @Test func listensOnAUnixSocketWithTheConfiguredMode() throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "adl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
            ).path
            let daemon = try DaemonProcess([
                "--unix-socket", path, "--unix-socket-mode", "0600", "--synthetic-latency", "5ms",
            ])
            #expect(daemon.bannerLines.first?.contains("unix:\(path)") == true)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let client = try RawConnection.open(unixPath: path)
            try client.borrowAndReturn()
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
