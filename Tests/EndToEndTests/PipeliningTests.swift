import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire
import Foundation
import Testing

extension EndToEnd {
    @Suite("adloaderd calls on one connection", .serialized, .timeLimit(.minutes(1)))
    struct PipeliningTests {
        @Test func aParkedBorrowAndAThousandPipelinedBorrowReturnPairsCompleteWithoutLoss() throws {
            let daemon = try DaemonProcess(["--max-calls-in-flight", "2000"], config: parkingConfig)
            let client = try RawConnection.open(port: daemon.port)
            let parked = try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "never", loader: "empty", waitMilliseconds: 30_000))
            var borrows: Set<UInt64> = []
            var batch: [UInt8] = []
            for _ in 0..<1_000 {
                let id = client.makeCallID()
                borrows.insert(id)
                RequestFrame(
                    callID: id, method: MethodName.borrow,
                    request: BorrowRequestMessage(adUnitID: "pipelined", waitMilliseconds: 20_000)
                ).appendFrame(to: &batch)
            }
            try client.send(batch)
            var returns: Set<UInt64> = []
            var leases: Set<UInt64> = []
            var returned = 0
            while returned < 1_000 {
                let frame = try #require(try client.readFrame())
                #expect(frame.end)
                #expect(frame.status.code == .ok, "\(frame.status)")
                if borrows.remove(frame.callID) != nil {
                    let lease = try #require(try BorrowResponseMessage(decoding: frame.message ?? []).lease)
                    #expect(leases.insert(lease.id).inserted, "lease \(lease.id) lent twice at once")
                    let id = try client.start(
                        MethodName.returnLease, ReturnRequestMessage(leaseID: lease.id, shown: false))
                    returns.insert(id)
                } else {
                    #expect(returns.remove(frame.callID) != nil, "unexpected call \(frame.callID)")
                    #expect(try ReturnResponseMessage(decoding: frame.message ?? []).outcome == .backInPool)
                    returned += 1
                }
            }
            #expect(borrows.isEmpty && returns.isEmpty)
            // The parked borrow never held anything up and is still parked.
            let pools = try client.call(MethodName.stats, StatsRequestMessage(), as: StatsResponseMessage.self).pools
            #expect(pools.first { $0.loader == "empty" }?.parkedBorrows == 1)
            let pipelined = try #require(pools.first { $0.adUnitID == "pipelined" })
            #expect(pipelined.leased == 0)
            #expect(pipelined.conservesAds)
            #expect(pipelined.borrowHits + pipelined.borrowMisses >= 1_000)
            try client.send(.cancel(callID: parked))
            #expect(try client.awaitEnd(of: parked).status.code == .cancelled)
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        /// Batches larger than the server's 64 KiB read buffer, sent in chunks that end inside
        /// frames, for several partial-frame timeouts: frames keep completing, so the client is
        /// not taken for a stalled one.
        @Test func aClientPipeliningBatchesLargerThanAReadIsNotClosedAsStalled() throws {
            let daemon = try DaemonProcess(["--partial-frame-timeout", "1s"])
            let client = try RawConnection.open(port: daemon.port)
            var frame: [UInt8] = []
            let padding = [MetadataEntry(key: "x-padding", value: String(repeating: "p", count: 4_000))]
            RequestFrame(
                callID: 1, method: MethodName.stats, metadata: padding,
                message: StatsRequestMessage(loader: "none").encoded()
            )
            .appendFrame(to: &frame)
            let batch = Array([[UInt8]](repeating: frame, count: 400).joined())
            #expect(batch.count > 64 * 1024)
            // Coprime with the frame size: a send ends on a frame boundary only every
            // frame-size sends (tens of megabytes apart), all others inside a frame.
            func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
            let chunk = (50_000...).first { gcd($0, frame.count) == 1 }!
            var pending: [UInt8] = []
            var sentBytes = 0
            var batches = 0
            var answered = 0
            func readAnswers(upTo count: Int) throws {
                while answered < count {
                    let answer = try #require(try client.readFrame())
                    #expect(answer.callID == 1 && answer.status.code == .ok, "\(answer.status)")
                    if answer.callID != 1 { throw DaemonError("closed: \(answer.status)") }
                    answered += 1
                }
            }
            let started = ContinuousClock.now
            while ContinuousClock.now - started < .seconds(3) || batches < 8 {
                pending += batch
                batches += 1
                while pending.count >= chunk {
                    try client.send(Array(pending[..<chunk]))
                    pending.removeFirst(chunk)
                    sentBytes += chunk
                }
                // One batch stays in flight: the client keeps sending while answers come back.
                try readAnswers(upTo: sentBytes / frame.count - 400)
            }
            try client.send(pending)
            try readAnswers(upTo: batches * 400)
            #expect(!daemon.stderrText.contains("partial frame not completed"))
            // A pause longer than the timeout on a frame boundary is not a stall either.
            let pause = ContinuousClock.now
            let observer = try RawConnection.open(port: daemon.port)
            while ContinuousClock.now - pause < .milliseconds(1_200) { _ = try observer.stats() }
            _ = try client.stats()
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func protocolErrorsAnswerTheCallAndKeepTheConnection() throws {
            let daemon = try DaemonProcess(config: parkingConfig)
            // A second, well-behaved connection is unaffected and no loaded ad is lost.
            let bystander = try RawConnection.open(port: daemon.port)
            try bystander.borrowAndReturn()
            let before = try #require(try bystander.stats().first { $0.adUnitID == "healthy" })
            let client = try RawConnection.open(port: daemon.port)
            // Unknown method.
            let unknown = try client.call("/adloader.v1.NativeAdLoader/Nope", StatsRequestMessage()).status
            #expect(unknown.code == .unimplemented)
            // Bad field values, each naming the field.
            let empty = try client.call(MethodName.borrow, BorrowRequestMessage(adUnitID: "")).status
            #expect(empty.code == .invalidArgument && empty.message.contains("ad_unit_id"))
            let loader = try client.call(MethodName.prefetch, PrefetchRequestMessage(adUnitID: "a", loader: "nope"))
                .status
            #expect(loader.code == .invalidArgument && loader.message.contains("loader"))
            let wait = try client.call(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "a", waitMilliseconds: 999_999)
            ).status
            #expect(wait.code == .invalidArgument && wait.message.contains("wait_ms"))
            let lease = try client.call(MethodName.returnLease, ReturnRequestMessage(leaseID: 12345, shown: false))
                .status
            #expect(lease.code == .notFound && lease.message.contains("lease_id"))
            // An undecodable request message inside a good envelope fails only that call.
            try client.send(RequestFrame(callID: 77, method: MethodName.borrow, message: [0xFF, 0xFF]))
            #expect(try client.awaitEnd(of: 77).status.code == .invalidArgument)
            // Duplicate call id in flight: both end, with one ALREADY_EXISTS (PROTOCOL.md 5.1).
            let first = try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "d", loader: "empty", waitMilliseconds: 20_000))
            try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "d", loader: "empty", waitMilliseconds: 20_000),
                callID: first)
            let duplicate = try client.awaitEnd(of: first).status
            #expect(duplicate.code == .alreadyExists)
            #expect(try client.stats().allSatisfy { $0.parkedBorrows == 0 })
            let lease0 = try client.call(MethodName.returnLease, ReturnRequestMessage(leaseID: 0, shown: false)).status
            #expect(lease0.code == .invalidArgument && lease0.message.hasPrefix("lease_id:"))
            let second = try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "d", loader: "empty", waitMilliseconds: 20_000))
            // Deadline shorter than the wait.
            let timed = try client.start(
                MethodName.borrow, BorrowRequestMessage(adUnitID: "d", loader: "empty", waitMilliseconds: 20_000),
                timeoutMilliseconds: 100)
            #expect(try client.awaitEnd(of: timed).status.code == .deadlineExceeded)
            // The second borrow is still parked; Cancel ends it.
            try client.send(.cancel(callID: second))
            #expect(try client.awaitEnd(of: second).status.code == .cancelled)
            #expect(try client.stats().allSatisfy { $0.parkedBorrows == 0 })
            try bystander.borrowAndReturn()
            let pools = try bystander.stats()
            #expect(pools.allSatisfy { $0.conservesAds && $0.leased == 0 }, "\(pools)")
            let after = try #require(pools.first { $0.adUnitID == "healthy" })
            #expect(after.loaded >= before.loaded)
            #expect(
                UInt64(after.available) + after.consumed + after.expired + after.removed >= UInt64(before.available))
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func watchStreamsFilteredEventsUntilCancelled() throws {
            let daemon = try DaemonProcess(["--synthetic-latency", "5ms"])
            let watcher = try RawConnection.open(port: daemon.port)
            let watch = try watcher.start(
                MethodName.watch, WatchRequestMessage(adUnitID: "w", kinds: [.leased, .returned]))
            let other = try RawConnection.open(port: daemon.port)
            try other.borrowAndReturn(adUnit: "elsewhere")
            try other.borrowAndReturn(adUnit: "w")
            var kinds: [AdEvent.Kind] = []
            while kinds.count < 2 {
                let frame = try #require(try watcher.readFrame())
                #expect(frame.callID == watch && !frame.end)
                let event = try EventMessage(decoding: frame.message ?? []).event
                #expect(event.adUnitID == "w")
                kinds.append(event.kind)
            }
            #expect(kinds == [.leased, .returned])
            try watcher.send(.cancel(callID: watch))
            #expect(try watcher.awaitEnd(of: watch).status.code == .cancelled)
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }

        @Test func disconnectEndsTheConnectionsParkedBorrowsAndWatches() throws {
            let daemon = try DaemonProcess(config: parkingConfig)
            let observer = try RawConnection.open(port: daemon.port)
            do {
                let leaving = try RawConnection.open(port: daemon.port)
                _ = try leaving.start(MethodName.watch, WatchRequestMessage())
                for _ in 0..<3 {
                    try leaving.start(
                        MethodName.borrow,
                        BorrowRequestMessage(adUnitID: "gone", loader: "empty", waitMilliseconds: 20_000))
                }
                let parked = try leaving.call(
                    MethodName.stats, StatsRequestMessage(loader: "empty"), as: StatsResponseMessage.self)
                #expect(parked.pools.first?.parkedBorrows == 3)
                leaving.disconnect()
            }
            // Another connection sees the borrows withdrawn; bounded by a number of round trips.
            var remaining = -1
            for _ in 0..<2_000 {
                remaining = try observer.stats().first { $0.adUnitID == "gone" }?.parkedBorrows ?? -1
                if remaining == 0 { break }
            }
            #expect(remaining == 0)
            try observer.borrowAndReturn()
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
            #expect(!daemon.stderrText.contains("\"level\":\"error\""))
        }
    }
}
