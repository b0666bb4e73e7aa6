import AdLoaderCore
import AdLoaderLogging
import AdLoaderUV
import AdLoaderWire

/// One request frame, decoded where its bytes are: the envelope's header, and the request
/// message already decoded for Borrow and Return (the hot calls) or copied for the others.
/// A message that does not decode is kept as the error, reported where dispatch reaches it.
struct IncomingCall {
    var header: RequestFrame.Header
    /// Set for a Borrow whose message decoded.
    var borrow: BorrowRequestMessage?
    /// Set for a Return whose message decoded.
    var returnRequest: ReturnRequestMessage?
    /// Why the Borrow or Return message did not decode.
    var messageError: FrameError?
    /// The message of the other methods.
    var bytes: [UInt8] = []

    /// - Throws: ``FrameError`` `.badEnvelope` when `envelope` is not a RequestFrame.
    init(decoding envelope: UnsafeRawBufferPointer) throws(FrameError) {
        header = try RequestFrame.decodeHeader(envelope)
        guard !header.cancel else { return }
        let message = UnsafeRawBufferPointer(rebasing: envelope[header.messageRange])
        do throws(FrameError) {
            switch header.method {
            case MethodName.borrow: borrow = try BorrowRequestMessage(decoding: message)
            case MethodName.returnLease: returnRequest = try ReturnRequestMessage(decoding: message)
            default: bytes = Array(message)
            }
        } catch {
            messageError = error
        }
    }

    /// The decoded message of a Borrow or Return. - Throws: the decoding error.
    func decoded<M>(_ message: M?) throws(FrameError) -> M {
        if let message { return message }
        throw messageError ?? FrameError(code: .badMessage, message: "missing message")
    }
}

/// Method dispatch: one request frame in, answers out. Every error a method can meet —
/// ``FrameError`` from decoding, ``LoaderError`` from the core, ``Status`` from the server's
/// own limits — is a `StatusConvertible` and becomes the call's status in one place.
extension Connection {
    /// The status for a call id already in flight on this connection.
    static let duplicateCallCode = Status.Code.alreadyExists

    func dispatch(_ call: IncomingCall) {
        let frame = call.header
        let callID = frame.callID
        if frame.cancel {
            cancelCall(callID)
            return
        }
        do {
            if callID == 0 { throw Status(code: .invalidArgument, message: "call_id: must not be 0") }
            if endCall(callID) {
                // PROTOCOL.md 5.1: the call in flight is dropped silently and the id gets one
                // final ALREADY_EXISTS, so "one end frame per call id" still holds.
                openCallEnded()
                throw Status(code: Self.duplicateCallCode, message: "call_id: \(callID) is already in flight")
            }
            if server.isDraining { throw Status(code: .unavailable, message: "server shutting down") }
            let limit = server.limits.maxCallsInFlightPerConnection
            if calls.count >= limit {
                throw Status(code: .resourceExhausted, message: "calls in flight: limit of \(limit) reached")
            }
            switch frame.method {
            case MethodName.borrow:
                try borrow(callID, try call.decoded(call.borrow), timeout: frame.timeoutMilliseconds)
            case MethodName.returnLease:
                let request = try call.decoded(call.returnRequest)
                if request.leaseID == 0 {
                    throw LoaderError(code: .invalidArgument, field: "lease_id", message: "must not be 0")
                }
                let outcome = try loader.returnLease(request.leaseID, shown: request.shown)
                answer(callID, returned: ReturnResponseMessage(outcome: outcome))
            case MethodName.prefetch:
                let request = try decode(PrefetchRequestMessage.self, call.bytes)
                let result = try loader.prefetch(adUnitID: request.adUnitID, loader: loaderName(request.loader))
                answer(callID, PrefetchResponseMessage(result: result))
            case MethodName.stats:
                // Filters that match nothing give an empty list (PROTOCOL.md 7.4).
                let request = try decode(StatsRequestMessage.self, call.bytes)
                let pools = loader.stats(loader: nonEmpty(request.loader), adUnitID: nonEmpty(request.adUnitID))
                // An answer above the message size would make clients with the same limit drop
                // the connection (PROTOCOL.md 8): refuse it and let the client filter.
                let limit = server.limits.maxMessageSize
                if let size = answer(callID, StatsResponseMessage(pools: pools), limit: limit) {
                    throw Status(
                        code: .resourceExhausted,
                        message: "stats answer of \(size) bytes exceeds the limit of \(limit) bytes; filter by loader or ad_unit_id")
                }
            case MethodName.watch:
                watch(callID, try decode(WatchRequestMessage.self, call.bytes), timeout: frame.timeoutMilliseconds)
            default:
                throw Status(code: .unimplemented, message: "unknown method \"\(frame.method)\"")
            }
        } catch let error as any StatusConvertible {
            answer(callID, status: error.status)
        } catch {
            answer(callID, status: Status(code: .internalError, message: "\(error)"))
        }
    }

    /// Decodes a request message from the frame's bytes without going through the generic
    /// `Collection` initializer (not specialized across modules).
    private func decode<M: WireMessage>(_ type: M.Type, _ bytes: [UInt8]) throws(FrameError) -> M {
        let result = bytes.withUnsafeBytes { body -> Result<M, FrameError> in
            do throws(FrameError) {
                return .success(try M(decoding: body))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func loaderName(_ name: String) -> String { name.isEmpty ? LoaderConfiguration.defaultName : name }

    private func nonEmpty(_ value: String) -> String? { value.isEmpty ? nil : value }

    private func deadlineTask(_ callID: UInt64, timeout: UInt32) -> (any ScheduledTask)? {
        guard timeout > 0 else { return nil }
        return clock.schedule(at: clock.now + .milliseconds(timeout)) { [weak self] in
            self?.deadlineExceeded(callID, timeout: timeout)
        }
    }

    // MARK: Borrow

    private func borrow(_ callID: UInt64, _ request: BorrowRequestMessage, timeout: UInt32) throws(LoaderError) {
        var wait = Duration.milliseconds(request.waitMilliseconds)
        // At the parked-borrow limit, the borrow still takes an available ad; only a borrow
        // that would have parked is refused.
        let limited = wait > .zero && server.parkedBorrowCount >= server.limits.maxParkedBorrows
        if limited {
            // An unknown loader is left to the core, which names the `loader` field.
            if let maximum = loader.configurations[loaderName(request.loader)]?.maximumBorrowWait, wait > maximum {
                throw LoaderError(code: .invalidArgument, field: "wait_ms", message: "must be 0...\(maximum.milliseconds) ms")
            }
            wait = .zero
        }
        let outcome = try loader.borrow(
            adUnitID: request.adUnitID, loader: loaderName(request.loader),
            slot: request.slot.isEmpty ? nil : request.slot, wait: wait
        ) { [weak self] result in
            self?.borrowFinished(callID, result, limited: limited)
        }
        switch outcome {
        case .answered(let result):
            borrowFinished(callID, result, limited: limited)
        case .parked(let parked):
            calls[callID] = .borrow(parked, deadline: deadlineTask(callID, timeout: timeout))
            server.parkedBorrowCount += 1
        case .parkingRefused:
            break  // never: `mayPark` is left true, the limit above turns the wait off instead
        }
    }

    private func borrowFinished(_ callID: UInt64, _ result: BorrowResult, limited: Bool) {
        var wasParked = false
        if case .borrow(_, let deadline)? = calls[callID] {
            calls[callID] = nil
            deadline?.cancel()
            server.parkedBorrowCount -= 1
            wasParked = true
        }
        defer { if wasParked { openCallEnded() } }
        guard isAcceptingCalls else {
            // Nobody to tell: put the ad back rather than leave it leased until it times out.
            if case .leased(let lease, reused: false) = result { _ = try? loader.returnLease(lease.id, shown: false) }
            return
        }
        switch result {
        case .leased, .noAdYet:
            if limited, result == .noAdYet {
                answer(
                    callID,
                    status: Status(
                        code: .resourceExhausted,
                        message: "parked borrows: limit of \(server.limits.maxParkedBorrows) reached"))
            } else if let message = BorrowResponseMessage(result) {
                answer(callID, borrow: message)
            }
        case .unavailable:
            let reason = server.isDraining ? "server shutting down" : "loader disabled"
            answer(callID, status: Status(code: .unavailable, message: reason))
        }
    }

    // MARK: Watch

    /// Like Stats, filters that match nothing are not an error: such a Watch streams nothing.
    private func watch(_ callID: UInt64, _ request: WatchRequestMessage, timeout: UInt32) {
        let kinds = Set(request.kinds)
        let loaderFilter = request.loader
        let adUnitFilter = request.adUnitID
        let token = loader.addObserver { [weak self] event in
            guard kinds.isEmpty || kinds.contains(event.kind),
                loaderFilter.isEmpty || event.loader == loaderFilter,
                adUnitFilter.isEmpty || event.adUnitID == adUnitFilter
            else { return }
            self?.watchEvent(callID, event)
        }
        calls[callID] = .watch(token, deadline: deadlineTask(callID, timeout: timeout))
    }

    /// Queues one event, unless the client reads too slowly: then the Watch ends with
    /// RESOURCE_EXHAUSTED (PROTOCOL.md 8) instead of growing the output without bound.
    private func watchEvent(_ callID: UInt64, _ event: AdEvent) {
        guard isAcceptingCalls else { return }
        let limit = server.limits.maxUnsentOutputPerConnection
        if output.count + stream.queuedWriteBytes > limit {
            guard endCall(callID) else { return }
            logger.warning("watch ended: client reads too slowly", ["call": .int(Int64(callID))])
            answer(callID, status: Status(code: .resourceExhausted, message: "unsent output: limit of \(limit) bytes reached; the client reads too slowly"))
            openCallEnded()
            return
        }
        streamEvent(callID, EventMessage(event: event))
    }

    // MARK: Cancel and deadlines

    private func cancelCall(_ callID: UInt64) {
        // A call already finished (its answer may be on the way) is not an error.
        guard endCall(callID) else { return }
        answer(callID, status: Status(code: .cancelled, message: "cancelled by the client"))
        openCallEnded()
    }

    private func deadlineExceeded(_ callID: UInt64, timeout: UInt32) {
        guard endCall(callID) else { return }
        answer(callID, status: Status(code: .deadlineExceeded, message: "deadline of \(timeout) ms exceeded"))
        openCallEnded()
    }

    /// Withdraws an open call without answering it; false when it is not open.
    func endCall(_ callID: UInt64) -> Bool {
        guard let call = calls.removeValue(forKey: callID) else { return false }
        switch call {
        case .borrow(let parked, let deadline):
            parked.cancel()
            deadline?.cancel()
            server.parkedBorrowCount -= 1
        case .watch(let token, let deadline):
            loader.removeObserver(token)
            deadline?.cancel()
        }
        return true
    }
}
