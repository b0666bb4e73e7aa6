import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire
import Foundation
import Testing

extension EndToEnd {
    /// Each limit tripped on one connection while a second, well-behaved connection keeps
    /// working, and no loaded ad is lost (Stats before and after).
    @Suite("adloaderd limits", .serialized, .timeLimit(.minutes(1)))
    struct LimitsTests {
        /// Starts a daemon with `flags`, opens the well-behaved connection and warms its pool.
        private func start(_ flags: [String]) throws -> (DaemonProcess, RawConnection) {
            let daemon = try DaemonProcess(flags, config: parkingConfig)
            let good = try RawConnection.open(port: daemon.port)
            try good.borrowAndReturn()
            return (daemon, good)
        }

        /// The well-behaved connection still works and every pool accounts for all its ads.
        private func expectHealthy(_ good: RawConnection, _ daemon: DaemonProcess) throws {
            try good.borrowAndReturn()
            let pools = try good.stats()
            #expect(!pools.isEmpty)
            for pool in pools {
                #expect(pool.conservesAds, "ads lost in \(pool)")
                #expect(pool.leased == 0, "lease left open in \(pool)")
            }
            let healthy = try #require(pools.first { $0.adUnitID == "healthy" })
            #expect(healthy.loaded > 0)
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func oversizeMessageGetsResourceExhaustedThenClose() throws {
            let (daemon, good) = try start(["--max-message-size", "1KiB"])
            let bad = try RawConnection.open(port: daemon.port)
            try bad.send([0, 0, 0, 0x08, 0x00])  // length 2048, no body: checked before any allocation
            let frames = try bad.readUntilClosed()
            #expect(frames.last?.status.code == .resourceExhausted)
            #expect(frames.last?.status.message.contains("1024") == true)
            try expectHealthy(good, daemon)
        }

        @Test(arguments: [
            (Array("GET / HTTP/1.1\r\n\r\n".utf8), Status.Code.invalidArgument),
            (ProtocolPreface.bytes + [1, 0, 0, 0, 1, 0], Status.Code.unimplemented),  // compressed flag
            (ProtocolPreface.bytes + [7, 0, 0, 0, 1, 0], Status.Code.invalidArgument),  // unknown flags
            // A garbage envelope.
            (ProtocolPreface.bytes + [0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF], Status.Code.invalidArgument),
        ])
        func brokenFramingGetsAStatusThenClose(bytes: [UInt8], code: Status.Code) throws {
            let (daemon, good) = try start([])
            let bad = try RawConnection.open(port: daemon.port, sendPreface: false)
            try bad.send(bytes)
            let frames = try bad.readUntilClosed()
            #expect(frames.last?.status.code == code)
            #expect(frames.last?.callID == 0)
            try expectHealthy(good, daemon)
        }

        @Test func tooManyCallsInFlightFailsOnlyThatCall() throws {
            let (daemon, good) = try start(["--max-calls-in-flight", "2"])
            let bad = try RawConnection.open(port: daemon.port)
            let parked = try (0..<2).map { _ in
                try bad.start(
                    MethodName.borrow, BorrowRequestMessage(adUnitID: "p", loader: "empty", waitMilliseconds: 20_000))
            }
            let status = try bad.call(MethodName.stats, StatsRequestMessage()).status
            #expect(status.code == .resourceExhausted)
            // The well-behaved connection has its own budget.
            let goodParked = try good.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "p", loader: "empty", waitMilliseconds: 20_000))
            try good.send(.cancel(callID: goodParked))
            #expect(try good.awaitEnd(of: goodParked).status.code == .cancelled)
            for id in parked {
                try bad.send(.cancel(callID: id))
                #expect(try bad.awaitEnd(of: id).status.code == .cancelled)
            }
            #expect(try bad.stats().contains { $0.loader == "empty" && $0.parkedBorrows == 0 })
            try expectHealthy(good, daemon)
        }

        @Test func tooManyParkedBorrowsFailsTheBorrowThatWouldPark() throws {
            let (daemon, good) = try start(["--max-parked-borrows", "1"])
            let bad = try RawConnection.open(port: daemon.port)
            let parked = try bad.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "p", loader: "empty", waitMilliseconds: 20_000))
            let status = try bad.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "p", loader: "empty", waitMilliseconds: 20_000)
            ).status
            #expect(status.code == .resourceExhausted)
            // At the limit, an unknown loader is still named as such (not as a bad wait_ms).
            let unknown = try bad.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "p", loader: "nope", waitMilliseconds: 1_000)
            ).status
            #expect(unknown.code == .invalidArgument)
            #expect(unknown.message.hasPrefix("loader:"), "\(unknown.message)")
            // At the limit, a borrow that finds an ad is still served, with or without a wait.
            try good.borrowAndReturn()
            try bad.send(.cancel(callID: parked))
            #expect(try bad.awaitEnd(of: parked).status.code == .cancelled)
            try expectHealthy(good, daemon)
        }

        @Test func connectionsOverTheLimitAreClosedAtOnce() throws {
            let (daemon, good) = try start(["--max-connections", "2"])
            let second = try RawConnection.open(port: daemon.port)
            try second.borrowAndReturn()
            let third = try RawConnection.open(port: daemon.port)
            let frames = try third.readUntilClosed()
            #expect(frames.map(\.callID) == [0])
            #expect(frames.first?.status.code == .resourceExhausted)
            try second.borrowAndReturn()
            try expectHealthy(good, daemon)
        }

        @Test func idleConnectionIsClosedButOneWithAnOpenCallIsNot() throws {
            let (daemon, good) = try start(["--idle-timeout", "1s"])
            // The well-behaved connection keeps a Watch open, so it is not idle.
            let watch = try good.start(MethodName.watch, WatchRequestMessage(loader: "empty"))
            let idle = try RawConnection.open(port: daemon.port)
            let frames = try idle.readUntilClosed()
            #expect(frames.map(\.callID) == [0])
            #expect(frames.first?.status.code == .unavailable)
            #expect(daemon.stderrText.contains("idle for"))
            try good.send(.cancel(callID: watch))
            #expect(try good.awaitEnd(of: watch).status.code == .cancelled)
            try expectHealthy(good, daemon)
        }

        @Test func partialFrameIsClosedAfterItsTimeout() throws {
            let (daemon, good) = try start(["--partial-frame-timeout", "300ms"])
            let slow = try RawConnection.open(port: daemon.port)
            try slow.send([0, 0, 0])  // three bytes of a length prefix, then nothing
            let frames = try slow.readUntilClosed()
            #expect(frames.map(\.callID) == [0])
            #expect(frames.first?.status.code == .deadlineExceeded)
            #expect(daemon.stderrText.contains("partial frame not completed"))
            let silent = try RawConnection.open(port: daemon.port, sendPreface: false)  // never sends its preface
            #expect(try silent.readUntilClosed().map(\.status.code) == [.deadlineExceeded])
            try expectHealthy(good, daemon)
        }

        /// The default loader may pool 6 ad units, each topped up to 2 ads.
        private static let poolCapConfig = """
            { "sources": { "synthetic": { "latency": "5ms" } },
              "loaders": { "default": { "maximumRetainedAdvertisements": 2, "numberOfAdvertisements": 2, "maximumPools": 6 } } }
            """

        @Test func newAdUnitsPastThePoolCapGetResourceExhaustedAndExistingPoolsKeepLending() throws {
            let daemon = try DaemonProcess(config: Self.poolCapConfig)
            let good = try RawConnection.open(port: daemon.port)
            try good.borrowAndReturn()  // pool 1: "healthy"
            // Stats of an ad unit without a pool lists nothing and creates no pool.
            let unknown = try good.call(
                MethodName.stats, StatsRequestMessage(adUnitID: "never"), as: StatsResponseMessage.self)
            #expect(unknown.pools.isEmpty)
            let sprayer = try RawConnection.open(port: daemon.port)
            var created = 0
            var refusal: Status?
            for unit in 0..<100 {
                // Prefetch and Borrow alike create pools.
                let id =
                    unit % 2 == 0
                    ? try sprayer.start(MethodName.prefetch, PrefetchRequestMessage(adUnitID: "spray-\(unit)"))
                    : try sprayer.start(MethodName.borrow, BorrowRequestMessage(adUnitID: "spray-\(unit)"))
                let end = try sprayer.awaitEnd(of: id)
                guard end.status.code == .ok else {
                    refusal = end.status
                    break
                }
                created += 1
            }
            #expect(created == 5)
            #expect(refusal?.code == .resourceExhausted)
            #expect(
                refusal?.message
                    == #"pools: limit of 6 ad units reached for loader "default" (loaders.default.maximumPools)"#)
            let parking = try sprayer.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "spray-new", waitMilliseconds: 1_000)
            ).status
            #expect(parking.code == .resourceExhausted)
            // The sprayer's own existing pools, and the other connection's, still lend.
            try sprayer.borrowAndReturn(adUnit: "spray-0")
            try good.borrowAndReturn()
            let pools = try good.stats()
            #expect(pools.count == 6)
            #expect(Set(pools.map(\.adUnitID)) == Set(["healthy"] + (0..<5).map { "spray-\($0)" }))
            try expectHealthy(good, daemon)
        }

        /// 600 pools of a loader "many", each with a ~110-byte ad unit id (under the 128-byte
        /// identifier limit): a Stats of all of them is about 75 KB, above a 64 KiB message size.
        private static let manyPoolsConfig = """
            { "sources": { "synthetic": { "latency": "5ms" } },
              "loaders": { "default": { "maximumRetainedAdvertisements": 10 },
                           "many": { "maximumRetainedAdvertisements": 1, "numberOfAdvertisements": 1 } } }
            """

        @Test func aStatsAnswerAboveTheMessageSizeIsRefusedAndAFilteredOneWorks() throws {
            let daemon = try DaemonProcess(["--max-message-size", "64KiB"], config: Self.manyPoolsConfig)
            let good = try RawConnection.open(port: daemon.port)
            try good.borrowAndReturn()
            let filler = try RawConnection.open(port: daemon.port)
            let units = (0..<600).map { "unit-\($0)-" + String(repeating: "x", count: 100) }
            for unit in units {
                _ = try filler.call(
                    MethodName.prefetch, PrefetchRequestMessage(adUnitID: unit, loader: "many"),
                    as: PrefetchResponseMessage.self)
            }
            let status = try filler.call(MethodName.stats, StatsRequestMessage()).status
            #expect(status.code == .resourceExhausted)
            let pattern =
                #/stats answer of (\d+) bytes exceeds the limit of 65536 bytes; filter by loader or ad_unit_id/#
            let match = try #require(status.message.wholeMatch(of: pattern), "\(status.message)")
            #expect(Int(match.1)! > 65_536)
            // The refused answer left the connection usable: filtered Stats, then any call.
            let one = try filler.call(
                MethodName.stats, StatsRequestMessage(loader: "many", adUnitID: units[7]), as: StatsResponseMessage.self
            )
            #expect(one.pools.map(\.adUnitID) == [units[7]])
            try filler.borrowAndReturn()
            // Another connection sees the same limit and keeps working too.
            #expect(
                try good.call(MethodName.stats, StatsRequestMessage(loader: "many")).status.code == .resourceExhausted)
            try good.borrowAndReturn()
            let defaults = try good.call(
                MethodName.stats, StatsRequestMessage(loader: "default"), as: StatsResponseMessage.self)
            #expect(defaults.pools.map(\.adUnitID) == ["healthy"])
            #expect(defaults.pools.allSatisfy { $0.conservesAds && $0.leased == 0 })
            for unit in units.prefix(10) {
                let pool = try good.call(
                    MethodName.stats, StatsRequestMessage(loader: "many", adUnitID: unit), as: StatsResponseMessage.self
                ).pools
                #expect(pool.count == 1 && pool.allSatisfy(\.conservesAds))
            }
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        /// Warms 20 pools so that each Stats answer is a few KiB.
        private func warmPools(_ good: RawConnection) throws {
            for unit in 0..<20 {
                _ = try good.call(
                    MethodName.prefetch, PrefetchRequestMessage(adUnitID: "u\(unit)"), as: PrefetchResponseMessage.self)
            }
        }

        /// Round trips on `good` until `duration` has passed: the daemon keeps serving.
        private func keepServing(_ good: RawConnection, for duration: Duration) throws {
            let start = ContinuousClock.now
            while ContinuousClock.now - start < duration { _ = try good.stats() }
        }

        @Test func clientThatDoesNotReadIsNoLongerReadUntilItDrains() throws {
            let (daemon, good) = try start(["--max-unsent-output", "1KiB", "--partial-frame-timeout", "300ms"])
            try warmPools(good)
            let greedy = try RawConnection.open(port: daemon.port, receiveBuffer: 4096)
            let sent = try greedy.floodUntilPaused(daemon)
            // Paused for longer than the partial-frame timeout: the frames it has not read wait
            // on the server, not on the client, so the client is not closed for them (the
            // partial frame its stream ends with may time out once every whole one is answered).
            try keepServing(good, for: .seconds(1))
            // Once the client reads, the server reads again: every whole request is answered.
            var answers = 0
            while answers < sent, let answer = try greedy.readFrame() {
                #expect(answer.callID == 1 && answer.status.code == .ok, "\(answer.status)")
                answers += 1
            }
            #expect(answers == sent)
            #expect(daemon.stderrText.contains("reading resumed"))
            greedy.disconnect()
            try expectHealthy(good, daemon)
        }

        /// The reviewer's lock-up: a paused connection past its partial-frame deadline spun the
        /// loop (100% CPU, no I/O, SIGTERM ignored).
        @Test func aPausedClientPastThePartialFrameTimeoutDoesNotStallTheDaemon() throws {
            let (daemon, good) = try start(
                ["--max-unsent-output", "1KiB", "--partial-frame-timeout", "300ms", "--shutdown-grace-period", "500ms"])
            try warmPools(good)
            let greedy = try RawConnection.open(port: daemon.port, receiveBuffer: 4096)
            _ = try greedy.floodUntilPaused(daemon)
            try keepServing(good, for: .seconds(1))
            try good.borrowAndReturn()
            let started = ContinuousClock.now
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit(timeout: .seconds(10)) == 0)
            #expect(ContinuousClock.now - started < .seconds(8))
            withExtendedLifetime(greedy) {}
        }
    }
}
