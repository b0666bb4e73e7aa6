import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// Malformed streams and configured limits. Each check ends by proving that a fresh,
/// well-behaved connection is unaffected.
extension ConformanceRun {
    static var abuseChecks: [Check] {
        [
            Check(name: "abuse.oversize-length-prefix") { try $0.oversizeLengthPrefix() },
            Check(name: "abuse.bad-preface") { try $0.badPreface() },
            Check(name: "abuse.compressed-flag") { try $0.badFlags(0x01, .unimplemented, "compressed flag") },
            Check(name: "abuse.unknown-flags") { try $0.badFlags(0x80, .invalidArgument, "flags 0x80") },
            Check(name: "abuse.garbage-envelope") { try $0.garbageEnvelope() },
            Check(name: "abuse.client-closes-mid-frame") { try $0.clientClosesMidFrame() },
        ]
    }

    static var limitChecks: [Check] {
        [
            Check(name: "limits.calls-in-flight") { try $0.callsInFlightLimit() },
            Check(name: "limits.parked-borrows") { try $0.parkedBorrowsLimit() },
            Check(name: "limits.connections") { try $0.connectionsLimit() },
            Check(name: "limits.idle-timeout") { try $0.idleTimeout() },
            Check(name: "limits.partial-frame-timeout") { try $0.partialFrameTimeout() },
            Check(name: "limits.output-cap") { try $0.outputCap() },
        ]
    }

    /// Fails unless the server sent one call-0 frame ending with `code` (section 6.3), nothing
    /// claiming success, and closed.
    /// - Returns: the observation's summary for the check's detail.
    private func expectConnectionError(
        _ observed: RawConnection.Observation, _ code: Status.Code, _ what: String
    ) throws(CheckFailure) -> String {
        if let ok = observed.frames.first(where: { $0.end && $0.status.code == .ok }) {
            throw CheckFailure("\(what): the server answered call \(ok.callID) with OK (\(observed.summary))")
        }
        guard observed.frames.contains(where: { $0.callID == 0 && $0.end && $0.status.code == code }) else {
            throw CheckFailure("\(what): expected a call-0 \(code) frame, then close; got \(observed.summary)")
        }
        guard observed.closed else { throw CheckFailure("\(what): \(code), but \(observed.summary)") }
        return observed.summary
    }

    func oversizeLengthPrefix() throws(CheckFailure) -> CheckOutcome {
        var details: [String] = []
        let limit = options.limits.maximumMessageSize
        for length in [UInt32(clamping: limit + 1), UInt32.max] {
            let connection = try connect()
            defer { connection.close() }
            // Only the 5-byte prefix: the server must refuse before the body (and allocating for it).
            try connection.send([
                0x00, UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
                UInt8(length & 0xFF),
            ])
            let observed = connection.observe()
            let summary = try expectConnectionError(
                observed, .resourceExhausted, "length prefix \(length) (limit \(limit))")
            details.append("\(length): \(summary)")
            try expectServerHealthy(after: "an oversize length prefix")
        }
        return .passed(details.joined(separator: " | "))
    }

    func badPreface() throws(CheckFailure) -> CheckOutcome {
        var details: [String] = []
        let attempts: [(String, [UInt8])] = [
            ("an HTTP/1.1 request", Array("GET / HTTP/1.1\r\nHost: adloader\r\n\r\n".utf8)),
            ("a future version", Array("ADLOADER/9\r\n".utf8)),
            (
                "a frame without preface",
                {
                    var bytes: [UInt8] = []
                    RequestFrame(
                        callID: 1, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: "")
                    )
                    .appendFrame(to: &bytes)
                    return bytes
                }()
            ),
        ]
        for (what, bytes) in attempts {
            let connection = try connectRaw()
            defer { connection.close() }
            try connection.send(bytes)
            let observed = connection.observe()
            let summary = try expectConnectionError(observed, .invalidArgument, "\(what) instead of the preface")
            guard observed.prefaceSeen else {
                throw CheckFailure("\(what) instead of the preface: the server's preface did not come first")
            }
            details.append("\(what): \(summary)")
            try expectServerHealthy(after: "\(what) instead of the preface")
        }
        return .passed(details.joined(separator: " | "))
    }

    func badFlags(_ flags: UInt8, _ code: Status.Code, _ what: String) throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        var frame: [UInt8] = []
        RequestFrame(callID: 1, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: ""))
            .appendFrame(to: &frame)
        frame[0] = flags
        try connection.send(frame)
        let summary = try expectConnectionError(connection.observe(), code, "a frame with \(what)")
        try expectServerHealthy(after: "a frame with \(what)")
        return .passed(summary)
    }

    func garbageEnvelope() throws(CheckFailure) -> CheckOutcome {
        var details: [String] = []
        let envelopes: [(String, [UInt8])] = [
            ("truncated field", [0x12, 0x10, 0x61]),
            ("invalid wire type", [0x0F, 0xFF, 0xFF]),
            ("random bytes", (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) | 0x80 }),
        ]
        for (what, body) in envelopes {
            let connection = try connect()
            defer { connection.close() }
            var bytes: [UInt8] = []
            FrameEncoder.append(body, to: &bytes)
            try connection.send(bytes)
            let summary = try expectConnectionError(
                connection.observe(), .invalidArgument, "an envelope with a \(what)")
            details.append("\(what): \(summary)")
            try expectServerHealthy(after: "a garbage envelope")
        }
        return .passed(details.joined(separator: " | "))
    }

    func clientClosesMidFrame() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        var bytes: [UInt8] = []
        RequestFrame(callID: 1, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: ""))
            .appendFrame(to: &bytes)
        try connection.send(Array(bytes.prefix(bytes.count / 2)))
        connection.close()
        try expectServerHealthy(after: "a client that closed mid-frame")
        return .passed("a fresh connection still works")
    }

    // MARK: Limits

    func callsInFlightLimit() throws(CheckFailure) -> CheckOutcome {
        guard let limit = options.limits.maximumCallsInFlight else {
            return .skipped("no maximumCallsInFlight given")
        }
        guard limit <= 10_000 else { return .skipped("maximumCallsInFlight \(limit) is above 10000") }
        let connection = try connect()
        defer { connection.close() }
        // Watches stay in flight until cancelled.
        let adUnit = freshAdUnit("in-flight")
        let watches = (0..<limit).map { _ in connection.makeCallID() }
        try connection.send(
            watches.map {
                RequestFrame(
                    callID: $0, method: MethodName.watch, message: Requests.watch(loader: loader, adUnitID: adUnit))
            })
        let extra = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
        let status = try extra.expect(.resourceExhausted, "call \(limit + 1) with \(limit) calls in flight")
        if let early = connection.stashedCallIDs.first {
            throw CheckFailure("Watch \(early) ended with fewer than \(limit) calls in flight")
        }
        try connection.send([RequestFrame.cancel(callID: watches[0])])
        try connection.awaitEnd(of: watches[0]).expect(.cancelled, "a cancelled Watch")
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("a call once one slot is free")
        try connection.send(watches.dropFirst().map { RequestFrame.cancel(callID: $0) })
        try expectServerHealthy(after: "reaching the calls-in-flight limit")
        return .passed("call \(limit + 1): \(status); after one cancel, OK")
    }

    func parkedBorrowsLimit() throws(CheckFailure) -> CheckOutcome {
        guard let limit = options.limits.maximumParkedBorrows else {
            return .skipped("no maximumParkedBorrows given")
        }
        guard let parkingLoader = options.parkingLoader else {
            return .skipped("needs a parking loader (a loader whose source never fills)")
        }
        guard limit <= 10_000 else { return .skipped("maximumParkedBorrows \(limit) is above 10000") }
        let connection = try connect()
        defer { connection.close() }
        let wait = UInt32(clamping: min(limitsWaitMilliseconds, timeout.milliseconds * 3))
        let adUnit = freshAdUnit("parked-limit")
        let parked = (0..<limit).map { _ in connection.makeCallID() }
        try connection.send(
            parked.map {
                RequestFrame(
                    callID: $0, method: MethodName.borrow,
                    message: Requests.borrow(adUnit, loader: parkingLoader, waitMilliseconds: wait))
            })
        let extra = try connection.call(
            MethodName.borrow, Requests.borrow(adUnit, loader: parkingLoader, waitMilliseconds: wait))
        let status = try extra.expect(.resourceExhausted, "parked borrow \(limit + 1) with \(limit) parked")
        try connection.send(parked.map { RequestFrame.cancel(callID: $0) })
        for id in parked { try connection.awaitEnd(of: id).expect(.cancelled, "a cancelled parked Borrow") }
        try expectServerHealthy(after: "reaching the parked-borrows limit")
        return .passed("borrow \(limit + 1): \(status)")
    }

    func connectionsLimit() throws(CheckFailure) -> CheckOutcome {
        guard let limit = options.limits.maximumConnections else { return .skipped("no maximumConnections given") }
        guard limit <= 256 else { return .skipped("maximumConnections \(limit) is above 256") }
        var open: [RawConnection] = []
        defer { open.forEach { $0.close() } }
        for index in 0..<limit {
            do {
                open.append(try connect())
            } catch {
                throw CheckFailure("connection \(index + 1) of \(limit) failed: \(error)")
            }
        }
        let extra = try connectRaw()
        defer { extra.close() }
        try? extra.sendPreface()
        let observed = extra.observe()
        // Closed at once; the server MAY first send its preface and a call-0 RESOURCE_EXHAUSTED.
        if let other = observed.frames.first(where: { !($0.callID == 0 && $0.status.code == .resourceExhausted) }) {
            throw CheckFailure("connection \(limit + 1): unexpected call \(other.callID) \(other.status)")
        }
        guard observed.closed else {
            throw CheckFailure("connection \(limit + 1) with \(limit) open was not closed: \(observed.summary)")
        }
        open.forEach { $0.close() }
        open.removeAll()
        // The server notices the closes asynchronously: retry within the timeout.
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try expectServerHealthy(after: "reaching the connections limit")
                break
            } catch {
                if ContinuousClock.now >= deadline { throw error }
            }
        }
        return .passed("connection \(limit + 1): \(observed.summary); after closing the others, a new one works")
    }

    func idleTimeout() throws(CheckFailure) -> CheckOutcome {
        guard let idle = options.limits.idleTimeout else { return .skipped("no idleTimeout given") }
        guard idle <= .seconds(30) else { return .skipped("idleTimeout \(idle) is above 30 s") }
        let connection = try connect()
        defer { connection.close() }
        let started = ContinuousClock.now
        let observed = connection.observe(timeout: idle + timeout)
        let elapsed = ContinuousClock.now - started
        let summary = try expectConnectionError(observed, .unavailable, "an idle connection")
        guard elapsed >= idle * 0.9 else {
            throw CheckFailure("an idle connection was closed after \(elapsed.milliseconds) ms, before \(idle)")
        }
        try expectServerHealthy(after: "an idle timeout")
        return .passed("\(summary) after \(elapsed.milliseconds) ms idle (limit \(idle.milliseconds) ms)")
    }

    func partialFrameTimeout() throws(CheckFailure) -> CheckOutcome {
        guard let limit = options.limits.partialFrameTimeout else { return .skipped("no partialFrameTimeout given") }
        guard limit <= .seconds(30) else { return .skipped("partialFrameTimeout \(limit) is above 30 s") }
        let connection = try connect()
        defer { connection.close() }
        let started = ContinuousClock.now
        try connection.send([0x00, 0x00, 0x00])  // three bytes of a length prefix, then silence
        let observed = connection.observe(timeout: limit + timeout)
        let elapsed = ContinuousClock.now - started
        let summary = try expectConnectionError(observed, .deadlineExceeded, "a connection stuck mid-frame")
        guard elapsed >= limit * 0.9 else {
            throw CheckFailure("closed after \(elapsed.milliseconds) ms, before the \(limit) partial-frame timeout")
        }
        try expectServerHealthy(after: "a partial-frame timeout")
        return .passed("\(summary), \(elapsed.milliseconds) ms into a partial frame")
    }

    func outputCap() throws(CheckFailure) -> CheckOutcome {
        guard options.limits.checkOutputCap else { return .skipped("output-cap check not requested") }
        let connection = try connectRaw(receiveBufferSize: 4_096)
        defer { connection.close() }
        try connection.handshake()
        let adUnit = freshAdUnit("output-cap")
        let slot = "conformance-unread"
        let wait = UInt32(clamping: min(limitsWaitMilliseconds, timeout.milliseconds * 3 / 4))
        // Hold a lease, so every later Borrow for the slot answers with a whole ad (REUSED).
        _ = try lease(
            of: try connection.call(
                MethodName.borrow, Requests.borrow(adUnit, loader: loader, slot: slot, waitMilliseconds: wait)),
            .leased, "Borrow for the slot")
        var batch: [UInt8] = []
        for _ in 0..<1_000 {
            RequestFrame(
                callID: connection.makeCallID(), method: MethodName.borrow,
                message: Requests.borrow(adUnit, loader: loader, slot: slot)
            )
            .appendFrame(to: &batch)
        }
        let budget = 32 * 1024 * 1024
        var sent = 0
        while sent < budget {
            do {
                try connection.send(batch, until: ContinuousClock.now + .seconds(1))
            } catch {
                connection.close()
                try expectServerHealthy(after: "a client that did not read")
                return .passed("the server stopped reading after about \(sent / 1024) KiB of unanswered requests")
            }
            sent += batch.count
        }
        throw CheckFailure(
            "the server kept reading \(budget / 1024 / 1024) MiB of requests whose answers were never read")
    }
}
