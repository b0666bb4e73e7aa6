import AdLoaderLogging
import AdLoaderService
import AdLoaderTime
import AdLoaderUV
import AdLoaderWire

/// One client connection of the framed protocol: reads frames, hands calls to the service,
/// writes answers, enforces the per-connection limits, and ends its open calls when it goes
/// away. What a method means is the service's business (``AdLoaderService``); the connection
/// keeps framing, the preface, timeouts, back-pressure and the table of call ids.
///
/// Answers are encoded straight into ``output``. All answers produced by one read callback
/// go out with one `uv_try_write` at its end; answers produced elsewhere (timers, Watch
/// events, parked borrows completing) mark the connection dirty and the server flushes it
/// once per loop iteration.
///
/// - Important: loop-confined. The server holds the connection from accept until
///   ``close(reason:level:)``; only the stream's callbacks reach it after that (weakly).
final class Connection: CallResponder {
    enum Phase: Equatable {
        /// Waiting for the client's preface.
        case awaitingPreface
        case open
        /// No more requests are read; closes once the output is written (bounded in time).
        case closingAfterFlush
        case closed
    }

    let id: UInt64
    let peer: String
    let stream: any FramedByteStream
    unowned let transport: FramedTransport
    let logger: Logger
    /// The transport's server, service, limits and ad encodings, held here: every `unowned` access to
    /// `transport` costs a swift_unownedRetainStrong and a release, several per request frame.
    let server: ServerContext
    let service: AdLoaderService
    let limits: ServerLimits
    let adEncodings: EncodedAdCache
    /// Loopback or a Unix socket (token auth may not apply).
    let peerIsLocal: Bool
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) private(set) var phase: Phase = .awaitingPreface
    @exclusivity(unchecked) private var decoder: FrameDecoder
    /// Encoded answers not yet handed to the socket.
    @exclusivity(unchecked) var output: [UInt8] = []
    @exclusivity(unchecked) var calls: [UInt64: OpenCall] = [:]
    @exclusivity(unchecked) private var machine: StateMachine
    @exclusivity(unchecked) private var timeoutTask: (any ScheduledTask)?
    @exclusivity(unchecked) private var timeoutDeadline = Int64.max
    @exclusivity(unchecked) private var lingerTask: (any ScheduledTask)?
    @exclusivity(unchecked) private var inReadCallback = false
    /// Queued in the server's flush list.
    @exclusivity(unchecked) var isDirty = false

    init(id: UInt64, peer: String, stream: any FramedByteStream, transport: FramedTransport) {
        self.id = id
        self.peer = peer
        self.stream = stream
        self.transport = transport
        self.logger = transport.logger.with(["connection": .int(Int64(id)), "peer": .string(peer)])
        self.server = transport.server
        self.service = transport.service
        self.limits = transport.limits
        self.adEncodings = transport.adEncodings
        self.peerIsLocal = CallAuthenticator.isLocal(peer: peer)
        decoder = FrameDecoder(maximumMessageSize: transport.limits.maxMessageSize, expectingPreface: true)
        machine = StateMachine(now: transport.clock.now.unixMilliseconds, limits: transport.limits)
    }

    var clock: any AdClock { transport.clock }
    var scheduler: any AdScheduler { transport.scheduler }
    var isAcceptingCalls: Bool { phase == .open || phase == .awaitingPreface }

    /// Starts reading and arms the preface timeout.
    func start() {
        do {
            try stream.readStart { [weak self] result in self?.didRead(result) }
        } catch {
            close(reason: "cannot read: \(error)", level: .warning)
            return
        }
        armTimeouts()
    }

    // MARK: Reading

    private func didRead(_ result: Result<UnsafeRawBufferPointer, UVError>) {
        switch result {
        case .failure(let error):
            if error.isEndOfFile {
                // A half-close (shutdown(SHUT_WR) after the last request) still reads its
                // answers: write them, then close. Open calls end as on a disconnect
                // (PROTOCOL.md 5.5).
                closeAfterFlush(reason: "closed by the client", level: .debug)
            } else {
                close(reason: "read failed: \(error)", level: .warning)
            }
        case .success(let bytes):
            guard isAcceptingCalls else { return }
            decoder.append(bytes)
            processBufferedFrames()
        }
    }

    /// Handles every whole frame buffered (until the output limit pauses the connection),
    /// then writes all the answers at once.
    private func processBufferedFrames() {
        let bufferedBefore = decoder.bufferedByteCount
        inReadCallback = true
        processFrames()
        inReadCallback = false
        if isAcceptingCalls {
            // Bytes consumed once the preface is in means a frame completed: progress.
            // (`hasPartialFrame` is also true for whole frames left buffered while reading is
            // paused; the state machine ignores partial frames while paused.)
            machine.received(
                at: clock.now.unixMilliseconds, hasPartialFrame: decoder.hasPartialFrame || !decoder.prefaceReceived,
                completedFrame: decoder.prefaceReceived && decoder.bufferedByteCount < bufferedBefore)
            armTimeouts()
        }
        if server.answersLeaveAtTheEndOfThePass, !output.isEmpty {
            markDirty()  // with every other connection's, after the pool journal's one write of the pass
        } else {
            flush()
        }
    }

    private func processFrames() {
        while isAcceptingCalls {
            if output.count + stream.queuedWriteBytes > limits.maxUnsentOutputPerConnection {
                // Backpressure where the bytes arrive: push out what we have; if the client
                // is not reading, leave the rest of its requests buffered until it drains.
                flush()
                if machine.readingPaused { return }
            }
            // Plain optionals rather than a Result of a multi-payload enum: destroying those
            // went through the runtime's generic value witnesses on every frame.
            var call: IncomingCall? = nil
            var envelopeError: FrameError? = nil
            let complete: Bool?
            do {
                complete = try decoder.withNextMessage { body -> Bool in
                    do throws(FrameError) {
                        try IncomingCall.decode(body, into: &call)
                    } catch {
                        envelopeError = error
                    }
                    return true
                }
            } catch {
                acknowledgePreface()
                fail(error)
                return
            }
            acknowledgePreface()
            guard complete != nil else { return }
            if let envelopeError {
                fail(envelopeError)
                return
            }
            // Moved out, not copied: the value holds the decoded request's strings.
            if let call = call.take() { dispatch(call) }
        }
    }

    /// Answers the client's preface with the server's, once.
    private func acknowledgePreface() {
        guard phase == .awaitingPreface, decoder.prefaceReceived else { return }
        phase = .open
        output.append(contentsOf: ProtocolPreface.bytes)
    }

    /// A framing error: the stream cannot be read further. Sends a status on call 0 when
    /// the client can still read one, then closes.
    private func fail(_ error: FrameError) {
        if phase == .awaitingPreface {
            // Answer in our protocol so a client of another version reads why.
            phase = .open
            output.append(contentsOf: ProtocolPreface.bytes)
        }
        ResponseFrame.append(callID: 0, status: error.status, to: &output)
        closeAfterFlush(reason: "\(error)", level: .warning)
    }

    // MARK: Answers (CallResponder)

    var isOpen: Bool { isAcceptingCalls }

    var unsentByteCount: Int { output.count + stream.queuedWriteBytes }

    /// A unary call's OK answer; a Borrow's ad is encoded once per ad (server-wide cache).
    func answer(_ callID: UInt64, _ response: ServiceResponse) {
        ResponseFrame.append(callID: callID, response: response, cache: adEncodings, to: &output)
        markDirty()
    }

    /// Dropped: the framed answer envelope has no metadata field (PROTOCOL.md 4).
    func addResponseMetadata(_ callID: UInt64, _ metadata: CallMetadata) {}

    /// A framed client's message size limit applies to the whole envelope.
    func answerSize(_ callID: UInt64, messageSize: Int) -> Int {
        ResponseFrame.envelopeSize(callID: callID, messageSize: messageSize)
    }

    func stream(_ callID: UInt64, _ message: some WireMessage) {
        ResponseFrame.append(callID: callID, message: message, end: false, to: &output)
        markDirty()
    }

    func finish(_ callID: UInt64, status: Status) {
        ResponseFrame.append(callID: callID, status: status, to: &output)
        markDirty()
    }

    func openCallEnded(_ call: OpenCall) {
        guard let open = calls[call.callID], open === call else { return }
        calls[call.callID] = nil
        openCallEnded()
    }

    private func markDirty() {
        guard !inReadCallback, !isDirty, phase != .closed else { return }
        isDirty = true
        transport.scheduleFlush(self)
    }

    // MARK: Writing

    /// Hands the output to the socket: what it takes now, the rest in one owned write request.
    func flush() {
        isDirty = false
        guard phase != .closed else { return }
        guard !output.isEmpty else {
            outputChanged()
            return
        }
        server.beforeAnswersLeave?()
        let result = output.withUnsafeBytes { bytes in
            stream.writeNowOrQueue(bytes) { { [weak self] error in self?.writeCompleted(error) } }
        }
        // Keep a modest buffer for the next answers; give back a big one.
        output.removeAll(keepingCapacity: output.capacity <= 256 * 1024)
        if let result {
            close(reason: "write failed: \(result)", level: writeFailureLevel)
            return
        }
        outputChanged()
    }

    private func writeCompleted(_ error: UVError?) {
        guard phase != .closed else { return }
        if let error {
            close(reason: "write failed: \(error)", level: writeFailureLevel)
            return
        }
        outputChanged()
    }

    /// A client that closed its side may be gone altogether: failing to write to it is normal.
    private var writeFailureLevel: LogLevel { stream.sawEndOfFile ? .debug : .warning }

    private func outputChanged() {
        let unsent = stream.queuedWriteBytes
        if phase == .closingAfterFlush {
            if unsent == 0 { close(reason: nil, level: .debug) }
            return
        }
        switch machine.outputChanged(unsent: unsent) {
        case .none: break
        case .pauseReading:
            logger.warning(
                "client is not reading its answers; reading paused",
                ["unsent": .int(Int64(unsent)), "limit": .int(Int64(transport.limits.maxUnsentOutputPerConnection))])
            stream.readStop()
        case .resumeReading:
            logger.info("client drained its answers; reading resumed", ["unsent": .int(Int64(unsent))])
            machine.readingResumed(at: clock.now.unixMilliseconds)
            // Requests buffered while paused come first; they may pause the connection again.
            processBufferedFrames()
            guard isAcceptingCalls, !machine.readingPaused else { return }
            do {
                try stream.resumeReading()
            } catch {
                close(reason: "cannot read: \(error)", level: .warning)
            }
        case .close(let reason):
            close(reason: reason, level: .warning)
        }
    }

    // MARK: Timeouts

    private func armTimeouts() {
        let deadline = machine.nextDeadline(hasOpenCalls: !calls.isEmpty)
        guard deadline < timeoutDeadline else { return }
        timeoutTask?.cancel()
        timeoutDeadline = deadline
        timeoutTask = scheduler.schedule(at: AdInstant(unixMilliseconds: deadline)) { [weak self] in
            self?.checkTimeouts()
        }
    }

    private func checkTimeouts() {
        timeoutTask = nil
        timeoutDeadline = .max
        guard isAcceptingCalls else { return }
        let now = clock.now.unixMilliseconds
        switch machine.checkTimeouts(now: now, hasOpenCalls: !calls.isEmpty) {
        case .close where !machine.readingPaused && stream.hasUnreadInput:
            // The client's bytes wait in the kernel: the loop ran late and fired this timer
            // before reading them. Look again after this turn's reads.
            timeoutDeadline = now + 1
            timeoutTask = scheduler.schedule(at: AdInstant(unixMilliseconds: now + 1)) { [weak self] in
                self?.checkTimeouts()
            }
        case .close(let status):
            if phase == .awaitingPreface {
                phase = .open
                output.append(contentsOf: ProtocolPreface.bytes)
            }
            ResponseFrame.append(callID: 0, status: status, to: &output)
            closeAfterFlush(reason: status.message, level: .info)
        case .checkAgain(let at):
            timeoutDeadline = at
            timeoutTask = scheduler.schedule(at: AdInstant(unixMilliseconds: at)) { [weak self] in self?.checkTimeouts()
            }
        }
    }

    /// Called when an open call ended: idleness counts from now.
    func openCallEnded() {
        guard calls.isEmpty, isAcceptingCalls else { return }
        machine.callsEnded(at: clock.now.unixMilliseconds)
        armTimeouts()
    }

    // MARK: Closing

    /// Stops reading, drops open calls, and closes once the output is written — or after the
    /// partial-frame timeout if the client does not read it.
    func closeAfterFlush(reason: String?, level: LogLevel) {
        guard isAcceptingCalls else { return }
        phase = .closingAfterFlush
        if let reason { logger.log(level, "closing connection", ["reason": .string(reason)]) }
        stream.readStop()
        endOpenCalls(status: nil)
        timeoutTask?.cancel()
        timeoutTask = nil
        lingerTask = scheduler.schedule(at: clock.now + transport.limits.partialFrameTimeout) { [weak self] in
            self?.close(reason: "output not read before closing", level: .warning)
        }
        // Flushing closes once nothing is left; inside a read callback, its own flush does.
        if !inReadCallback { flush() }
    }

    /// Server shutdown (PROTOCOL.md 9), after the service ended the open calls: a call-0 frame
    /// with `status` announces the shutdown. Reading goes on, so calls already on their way are
    /// answered UNAVAILABLE by the draining service rather than dropped; the connection closes
    /// when the client closes it, or when the server's grace period ends.
    func drain(status: Status) {
        guard isAcceptingCalls else { return }
        endOpenCalls(status: status)
        guard phase == .open else {
            // No preface yet: nothing was asked, nothing to answer.
            closeAfterFlush(reason: nil, level: .debug)
            return
        }
        ResponseFrame.append(callID: 0, status: status, to: &output)
        flush()
    }

    /// Closes now; pending writes are cancelled. Open calls end without an answer.
    func close(reason: String?, level: LogLevel) {
        guard phase != .closed else { return }
        phase = .closed
        endOpenCalls(status: nil)
        timeoutTask?.cancel()
        timeoutTask = nil
        lingerTask?.cancel()
        lingerTask = nil
        output = []
        if let reason { logger.log(level, "connection closed", ["reason": .string(reason)]) }
        stream.close()
        transport.connectionClosed(self)
    }

    /// Ends every open call: parked borrows are withdrawn (their ads stay in the pool),
    /// watches unregistered; with a status, each call is answered with it.
    private func endOpenCalls(status: Status?) {
        guard !calls.isEmpty else { return }
        for callID in calls.keys.sorted() {
            if let call = calls.removeValue(forKey: callID) { service.end(call, answering: status) }
        }
    }
}
