import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// Multiplexing: parked calls, cancellation, deadlines, Watch streams, pipelining and framing
/// that splits or packs frames.
extension ConformanceRun {
    static var streamChecks: [Check] {
        [
            Check(name: "borrow.parked-does-not-block") { try $0.parkedBorrowDoesNotBlock() },
            Check(name: "borrow.cancel-parked") { try $0.cancelParkedBorrow() },
            Check(name: "borrow.deadline-exceeded") { try $0.borrowDeadlineExceeded() },
            Check(name: "borrow.wait-ends-no-ad-yet") { try $0.waitEndsWithNoAdYet() },
            Check(name: "borrow.disconnect-unparks") { try $0.disconnectUnparks() },
            Check(name: "watch.events-until-cancel") { try $0.watchUntilCancel() },
            Check(name: "watch.deadline-exceeded") { try $0.watchDeadlineExceeded() },
            Check(name: "pipeline.borrow-return-pairs") { try $0.pipelinedBorrowReturnPairs() },
            Check(name: "pipeline.burst-in-one-write") { try $0.burstInOneWrite() },
            Check(name: "framing.byte-by-byte") { try $0.byteByByte() },
            Check(name: "framing.maximum-size-accepted") { try $0.maximumSizeAccepted() },
        ]
    }

    /// The loader parked borrows use, and a note for details when it is the filling loader.
    private var parking: (loader: String, note: String) {
        if let parkingLoader = options.parkingLoader { return (parkingLoader, "") }
        return (loader, " (on \"\(loader)\": relies on the source's latency)")
    }

    /// A Borrow on a fresh ad unit that waits up to three timeouts.
    private func parkedBorrow(_ callID: UInt64, timeoutMilliseconds: UInt32 = 0) -> RequestFrame {
        let wait = UInt32(clamping: min(limitsWaitMilliseconds, timeout.milliseconds * 3))
        return RequestFrame(
            callID: callID, method: MethodName.borrow, timeoutMilliseconds: timeoutMilliseconds,
            message: Requests.borrow(freshAdUnit("parked"), loader: parking.loader, waitMilliseconds: wait))
    }

    func parkedBorrowDoesNotBlock() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        let borrow = connection.makeCallID()
        let stats = connection.makeCallID()
        try connection.send([
            parkedBorrow(borrow),
            RequestFrame(
                callID: stats, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: "")),
        ])
        let first = try connection.nextFrame(until: ContinuousClock.now + timeout)
        guard first.callID == stats else {
            throw CheckFailure(
                "the first answer was for the parked Borrow (call \(first.callID), status \(first.status)), "
                    + "not for the Stats sent after it\(parking.note)")
        }
        connection.stash(first)
        _ = try connection.awaitEnd(of: stats).okMessage("Stats behind a parked Borrow")
        // Clean up: cancel the borrow, and give back a lease if it got one meanwhile.
        try connection.send([RequestFrame.cancel(callID: borrow)])
        let end = try connection.awaitEnd(of: borrow)
        if end.status.code == .ok, let bytes = end.messages.first,
            let response = try? BorrowResponseMessage(decoding: bytes), let lease = response.lease
        {
            _ = try? connection.call(MethodName.returnLease, Requests.returnLease(lease.id))
        }
        return .passed("Stats answered while the Borrow stayed parked\(parking.note)")
    }

    func cancelParkedBorrow() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        let borrow = connection.makeCallID()
        try connection.send([parkedBorrow(borrow)])
        // The Stats round trip proves the Borrow reached the server and parked before the cancel.
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: "")).okMessage("Stats")
        if connection.stashedCallIDs.contains(borrow) {
            throw CheckFailure("the Borrow answered before it could be cancelled\(parking.note)")
        }
        let started = ContinuousClock.now
        try connection.send([RequestFrame.cancel(callID: borrow)])
        let status = try connection.awaitEnd(of: borrow).expect(.cancelled, "a cancelled parked Borrow")
        let elapsed = ContinuousClock.now - started
        // Cancelling an id that is not in flight must not disturb the connection.
        try connection.send([RequestFrame.cancel(callID: borrow), RequestFrame.cancel(callID: 999_999_999)])
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats after cancelling ids not in flight")
        if let stray = connection.stashedCallIDs.first {
            throw CheckFailure("an answer for call \(stray) arrived after its end")
        }
        return .passed("\(status) \(elapsed.milliseconds) ms after the cancel\(parking.note)")
    }

    func borrowDeadlineExceeded() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        // On a loader that fills, the deadline must be well inside the source's latency.
        let deadline: UInt32 = options.parkingLoader == nil ? 5 : 200
        let borrow = connection.makeCallID()
        let started = ContinuousClock.now
        try connection.send([parkedBorrow(borrow, timeoutMilliseconds: deadline)])
        let status = try connection.awaitEnd(of: borrow).expect(
            .deadlineExceeded, "a Borrow with timeout_ms \(deadline)")
        let elapsed = ContinuousClock.now - started
        if options.parkingLoader != nil, elapsed < .milliseconds(Int64(deadline) - 20) {
            throw CheckFailure("DEADLINE_EXCEEDED after \(elapsed.milliseconds) ms, before the \(deadline) ms deadline")
        }
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats after the deadline")
        return .passed("\(status) after \(elapsed.milliseconds) ms (timeout_ms \(deadline))\(parking.note)")
    }

    func waitEndsWithNoAdYet() throws(CheckFailure) -> CheckOutcome {
        guard let parkingLoader = options.parkingLoader else {
            return .skipped("needs a parking loader (a loader whose source never fills)")
        }
        let connection = try connect()
        defer { connection.close() }
        let wait: UInt32 = 200
        let started = ContinuousClock.now
        let result = try connection.call(
            MethodName.borrow, Requests.borrow(freshAdUnit("wait-ends"), loader: parkingLoader, waitMilliseconds: wait),
            timeoutMilliseconds: UInt32(clamping: timeout.milliseconds))
        let elapsed = ContinuousClock.now - started
        let response = try decode(BorrowResponseMessage.self, try result.okMessage("Borrow"), "Borrow")
        guard response.outcome == .noAdYet else {
            throw CheckFailure("a Borrow whose wait ended: expected OK NO_AD_YET, got \(response.outcome)")
        }
        guard elapsed >= .milliseconds(Int64(wait) - 20) else {
            throw CheckFailure("NO_AD_YET after \(elapsed.milliseconds) ms, before the \(wait) ms wait ended")
        }
        return .passed("OK NO_AD_YET after \(elapsed.milliseconds) ms (wait_ms \(wait), deadline later)")
    }

    func disconnectUnparks() throws(CheckFailure) -> CheckOutcome {
        guard let parkingLoader = options.parkingLoader else {
            return .skipped("needs a parking loader (a loader whose source never fills)")
        }
        let adUnit = freshAdUnit("disconnect-parked")
        let wait = UInt32(clamping: min(limitsWaitMilliseconds, timeout.milliseconds * 3))
        let observer = try connect()
        defer { observer.close() }
        func parked() throws(CheckFailure) -> Int {
            let result = try observer.call(MethodName.stats, Requests.stats(loader: parkingLoader, adUnitID: adUnit))
            let pools = try decode(StatsResponseMessage.self, try result.okMessage("Stats"), "Stats").pools
            return pools.first?.parkedBorrows ?? 0
        }
        let client = try connect()
        let borrow = client.makeCallID()
        try client.send([
            RequestFrame(
                callID: borrow, method: MethodName.borrow,
                message: Requests.borrow(adUnit, loader: parkingLoader, waitMilliseconds: wait))
        ])
        _ = try client.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: "")).okMessage("Stats")
        let before = try parked()
        guard before == 1 else { throw CheckFailure("Stats shows \(before) parked borrows, expected 1") }
        client.close()
        // The server notices the close on its next read: poll Stats within the timeout.
        let deadline = ContinuousClock.now + timeout
        while try parked() != 0 {
            if ContinuousClock.now >= deadline {
                throw CheckFailure("the Borrow stayed parked \(timeout) after its connection closed (PROTOCOL.md 5.5)")
            }
        }
        return .passed("1 parked borrow before the disconnect, 0 after")
    }

    func watchDeadlineExceeded() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        let id = connection.makeCallID()
        let started = ContinuousClock.now
        try connection.send([
            RequestFrame(
                callID: id, method: MethodName.watch, timeoutMilliseconds: 100,
                message: Requests.watch(loader: loader, adUnitID: freshAdUnit("watch-deadline")))
        ])
        let status = try connection.awaitEnd(of: id).expect(.deadlineExceeded, "a Watch with timeout_ms 100")
        let elapsed = ContinuousClock.now - started
        guard elapsed >= .milliseconds(80) else {
            throw CheckFailure("the Watch ended after \(elapsed.milliseconds) ms, before its 100 ms deadline")
        }
        return .passed("\(status) after \(elapsed.milliseconds) ms")
    }

    func watchUntilCancel() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        let adUnit = freshAdUnit("watch")
        let all = connection.makeCallID()
        let finishedOnly = connection.makeCallID()
        try connection.send([
            RequestFrame(
                callID: all, method: MethodName.watch, message: Requests.watch(loader: loader, adUnitID: adUnit)),
            RequestFrame(
                callID: finishedOnly, method: MethodName.watch,
                message: Requests.watch(loader: loader, adUnitID: adUnit, kinds: [.loadFinished])),
        ])
        // Stats first, so both watches are registered before anything happens in the pool.
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: "")).okMessage("Stats")
        _ = try connection.call(MethodName.prefetch, Requests.prefetch(adUnit, loader: loader)).okMessage("Prefetch")

        var kinds: [AdEvent.Kind] = []
        let deadline = ContinuousClock.now + timeout
        while !(kinds.contains(.received) && kinds.contains(.loadFinished)) {
            let frame = try connection.nextFrame(until: deadline)
            guard frame.callID == all else {
                connection.stash(frame)
                if frame.callID == finishedOnly { continue }
                throw CheckFailure("unexpected frame for call \(frame.callID) while watching")
            }
            if frame.end { throw CheckFailure("the Watch ended by itself with \(frame.status)") }
            guard let message = frame.message else { throw CheckFailure("a Watch frame without an event or end") }
            let event = try decode(EventMessage.self, message, "Watch event").event
            guard event.adUnitID == adUnit, event.loader == loader else {
                throw CheckFailure("the Watch for \(adUnit) delivered an event of \(event.loader)/\(event.adUnitID)")
            }
            kinds.append(event.kind)
        }

        try connection.send([RequestFrame.cancel(callID: all), RequestFrame.cancel(callID: finishedOnly)])
        let ended = try connection.awaitEnd(of: all)
        try ended.expect(.cancelled, "the cancelled Watch")
        let filtered = try connection.awaitEnd(of: finishedOnly)
        try filtered.expect(.cancelled, "the cancelled filtered Watch")
        for message in filtered.messages {
            let event = try decode(EventMessage.self, message, "filtered Watch event").event
            guard event.kind == .loadFinished else {
                throw CheckFailure("a Watch for LOAD_FINISHED only delivered a \(event.kind) event")
            }
        }
        guard !filtered.messages.isEmpty else {
            throw CheckFailure("a Watch for LOAD_FINISHED saw no event although the prefetch finished")
        }
        // Nothing more for either call after its end.
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: "")).okMessage("Stats")
        if let stray = connection.stashedCallIDs.first {
            throw CheckFailure("a frame for call \(stray) arrived after its end")
        }
        return .passed("events \(kinds.map { "\($0)" }.joined(separator: ",")); the filter held; CANCELLED on cancel")
    }

    func pipelinedBorrowReturnPairs() throws(CheckFailure) -> CheckOutcome {
        let total = options.pipelinedPairs
        let depth = max(1, min(options.pipelineDepth, total))
        guard total > 0 else { return .skipped("pipelinedPairs is 0") }
        let connection = try connect()
        defer { connection.close() }
        let adUnit = freshAdUnit("pipeline")
        let wait = UInt32(clamping: min(limitsWaitMilliseconds, timeout.milliseconds))
        _ = try connection.call(MethodName.prefetch, Requests.prefetch(adUnit, loader: loader)).okMessage("Prefetch")

        var borrows: [UInt64: Int] = [:]  // call id -> pair index, while in flight
        var returns: [UInt64: Int] = [:]
        var finished: Set<UInt64> = []
        var leasedAds: [String: UInt64] = [:]  // ad id -> lease id, for ads currently lent
        var started = 0
        var completed = 0
        func borrowFrame() -> RequestFrame {
            let id = connection.makeCallID()
            borrows[id] = started
            started += 1
            return RequestFrame(
                callID: id, method: MethodName.borrow,
                message: Requests.borrow(adUnit, loader: loader, waitMilliseconds: wait))
        }
        try connection.send((0..<depth).map { _ in borrowFrame() })
        let deadline = ContinuousClock.now + timeout * 4 + .milliseconds(Int64(total) * 5)
        while completed < total {
            let frame = try connection.nextFrame(until: deadline)
            guard frame.end else { throw CheckFailure("a unary call \(frame.callID) sent a frame without end") }
            guard finished.insert(frame.callID).inserted else {
                throw CheckFailure("call \(frame.callID) was answered twice")
            }
            if let pair = borrows.removeValue(forKey: frame.callID) {
                let result = CallResult(
                    callID: frame.callID, messages: frame.message.map { [$0] } ?? [], status: frame.status)
                let lent = try lease(of: result, .leased, "Borrow #\(pair)")
                if let holder = leasedAds[lent.ad.id] {
                    throw CheckFailure("ad \(lent.ad.id) lent under lease \(lent.id) while lease \(holder) held it")
                }
                leasedAds[lent.ad.id] = lent.id
                let returnID = connection.makeCallID()
                returns[returnID] = pair
                var frames = [
                    RequestFrame(
                        callID: returnID, method: MethodName.returnLease, message: Requests.returnLease(lent.id))
                ]
                // The Return goes first on the wire, so its ad is back before the next Borrow.
                leasedAds[lent.ad.id] = nil
                if started < total { frames.append(borrowFrame()) }
                try connection.send(frames)
            } else if let pair = returns.removeValue(forKey: frame.callID) {
                let result = CallResult(
                    callID: frame.callID, messages: frame.message.map { [$0] } ?? [], status: frame.status)
                let outcome = try decode(ReturnResponseMessage.self, try result.okMessage("Return #\(pair)"), "Return")
                    .outcome
                guard outcome == .backInPool else {
                    throw CheckFailure(
                        "Return #\(pair) unshown: expected BACK_IN_POOL, got \(String(describing: outcome))")
                }
                completed += 1
            } else {
                throw CheckFailure("an answer for call \(frame.callID), which was never sent")
            }
        }
        guard borrows.isEmpty, returns.isEmpty else {
            throw CheckFailure("\(borrows.count) borrows and \(returns.count) returns still unanswered")
        }
        return .passed("\(total) Borrow/Return pairs, \(depth) in flight, each answered exactly once")
    }

    func burstInOneWrite() throws(CheckFailure) -> CheckOutcome {
        let count = max(1, options.pipelinedPairs)
        let connection = try connect()
        defer { connection.close() }
        let adUnit = freshAdUnit("burst")
        var frames: [RequestFrame] = []
        var pending: Set<UInt64> = []
        for index in 0..<count {
            let id = connection.makeCallID()
            pending.insert(id)
            frames.append(
                index.isMultiple(of: 2)
                    ? RequestFrame(
                        callID: id, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: adUnit))
                    : RequestFrame(
                        callID: id, method: MethodName.borrow, message: Requests.borrow(adUnit, loader: loader)))
        }
        try connection.send(frames)
        let deadline = ContinuousClock.now + timeout * 2
        var leases: [UInt64] = []
        while !pending.isEmpty {
            let frame = try connection.nextFrame(until: deadline)
            guard pending.remove(frame.callID) != nil else {
                throw CheckFailure("call \(frame.callID) answered twice or never sent")
            }
            guard frame.end, frame.status.code == .ok else {
                throw CheckFailure("call \(frame.callID) answered \(frame.status) (end \(frame.end))")
            }
            if let message = frame.message, let response = try? BorrowResponseMessage(decoding: message),
                let lease = response.lease
            {
                leases.append(lease.id)
            }
        }
        if !leases.isEmpty {
            try connection.send(
                leases.map {
                    RequestFrame(
                        callID: connection.makeCallID(), method: MethodName.returnLease,
                        message: Requests.returnLease($0))
                })
        }
        return .passed("\(count) Stats and Borrow calls in one \(frames.count)-frame write, each answered once")
    }

    func byteByByte() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectRaw()
        defer { connection.close() }
        for byte in ProtocolPreface.bytes { try connection.send([byte]) }
        let answer = try connection.readRaw(ProtocolPreface.count)
        guard answer == ProtocolPreface.bytes else {
            throw CheckFailure("preface sent bytewise answered \(hex(answer))")
        }
        connection.markPrefaceConsumed()
        let id = connection.makeCallID()
        var bytes: [UInt8] = []
        RequestFrame(callID: id, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: ""))
            .appendFrame(to: &bytes)
        for byte in bytes { try connection.send([byte]) }
        _ = try connection.awaitEnd(of: id).okMessage("Stats sent one byte per write")
        return .passed("preface and a \(bytes.count)-byte frame sent one byte per write")
    }

    func maximumSizeAccepted() throws(CheckFailure) -> CheckOutcome {
        let limit = options.limits.maximumMessageSize
        guard limit <= 64 * 1024 * 1024 else { return .skipped("maximumMessageSize \(limit) is above 64 MiB") }
        let connection = try connect()
        defer { connection.close() }
        let id = connection.makeCallID()
        guard let envelope = Self.paddedStatsEnvelope(callID: id, loader: loader, size: limit) else {
            return .skipped("cannot build a Stats envelope of exactly \(limit) bytes")
        }
        var bytes: [UInt8] = []
        FrameEncoder.append(envelope, to: &bytes)
        try connection.send(bytes, until: ContinuousClock.now + timeout * 2)
        _ = try connection.awaitEnd(of: id, timeout: timeout * 2).okMessage("a \(limit)-byte Stats envelope")
        return .passed("a message of exactly \(limit) bytes answered OK")
    }

    /// A Stats RequestFrame of exactly `size` encoded bytes: the StatsRequest carries an unknown
    /// length-delimited field (number 1000) as padding, which decoders skip.
    static func paddedStatsEnvelope(callID: UInt64, loader: String, size: Int) -> [UInt8]? {
        let base = Requests.stats(loader: loader, adUnitID: "")
        func envelope(padding: Int) -> [UInt8] {
            var message = base
            message += [0xC2, 0x3E]  // field 1000, wire type 2
            var length = UInt64(padding)
            repeat {
                message.append(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
                length >>= 7
            } while length > 0
            message += [UInt8](repeating: 0x2A, count: padding)
            return RequestFrame(callID: callID, method: MethodName.stats, message: message).encoded()
        }
        var padding = max(0, size - 64)
        for _ in 0..<8 {
            let bytes = envelope(padding: padding)
            if bytes.count == size { return bytes }
            padding += size - bytes.count
            if padding < 0 { return nil }
        }
        return nil
    }
}
