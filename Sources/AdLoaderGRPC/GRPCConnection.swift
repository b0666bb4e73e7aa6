import AdLoaderLogging
import AdLoaderService
import AdLoaderTime
import AdLoaderUV
import AdLoaderWire
internal import CNghttp2

/// One HTTP/2 connection carrying gRPC calls: an nghttp2 server session fed with the bytes its
/// stream reads, whose output goes back to the stream. Calls of `adloader.v1.NativeAdLoader`
/// go to the service exactly as the framed transport's do (this is their ``CallResponder``,
/// the stream id as call id); health and reflection are answered here.
///
/// Answers produced while nghttp2 reads (inside `nghttp2_session_mem_recv`) go out at the end
/// of the read callback; answers produced elsewhere (timers, Watch events, parked borrows)
/// mark the connection dirty and the transport flushes it once per loop iteration.
///
/// - Important: loop-confined. The transport holds the connection from accept until
///   ``close(reason:level:)``; nghttp2 reaches it through an unretained pointer that is valid
///   because the session is deleted in ``close(reason:level:)``.
final class GRPCConnection: CallResponder {
    enum Phase: Equatable {
        case open
        /// A GOAWAY ended the session: closes once the output is written (bounded in time).
        case closingAfterFlush
        case closed
    }

    let id: UInt64
    let peer: String
    let stream: any ByteStream
    /// Unowned and unchecked: the transport owns its connections and outlives each (a checked
    /// `unowned` load was a retain and a release through the transport's side table each time).
    unowned(unsafe) let transport: GRPCTransport
    let logger: Logger
    let server: ServerContext
    let service: AdLoaderService
    let limits: ServerLimits
    let http2: HTTP2Limits
    /// Loopback or a Unix socket (token auth may not apply).
    let peerIsLocal: Bool
    private(set) var phase = Phase.open
    // The hot stored properties below are `@exclusivity(unchecked)`: loop-confined, and no
    // method holds an access across a call that re-enters this object (see GRPCStream).
    private(set) var session: OpaquePointer?
    @exclusivity(unchecked) var streams = OpenStreams()
    /// Streams of finished calls, kept for the next ones (their buffers keep their storage).
    @exclusivity(unchecked) var spareStreams: [GRPCStream] = []
    /// The stream whose header block nghttp2 is reading (its header callbacks come in a row).
    /// Unretained: the stream is in ``streams`` while it is set (cleared when it closes).
    @exclusivity(unchecked) var headerStream: Unmanaged<GRPCStream>?
    /// The stream ``openStream(_:)`` found last, unretained: an open stream (it is cleared
    /// when that stream closes, and with the connection).
    @exclusivity(unchecked) var lastStream: Unmanaged<GRPCStream>?
    /// Streams refused because the client opened more than SETTINGS_MAX_CONCURRENT_STREAMS.
    var refusedStreams = 0
    /// The response headers of every answer that has messages, and the trailers of an OK one.
    private(set) var responseHeaders = GRPCHeaderBlock([])
    private(set) var okTrailers = GRPCHeaderBlock([])
    /// Whether the session's SETTINGS went out with the advertised stream limit.
    private var settingsAdvertised = false
    /// The session's memory (``HTTP2Allocator``): it outlives the session.
    let allocator = HTTP2Allocator()
    /// Bytes nghttp2 produced and the socket did not take yet.
    @exclusivity(unchecked) var output: [UInt8] = []
    /// Bytes of answers queued in streams, not yet taken by nghttp2.
    @exclusivity(unchecked) var bufferedAnswerBytes = 0
    @exclusivity(unchecked) private var inReadCallback = false
    /// Input read and not yet given to nghttp2: what came after this connection's turn ended
    /// (``HTTP2Limits/inputBytesPerTurn``, ``HTTP2Limits/headerWorkPerTurn``). While some waits
    /// the connection does not read (its peer's bytes stay in the kernel); the transport gives
    /// it its next turn in the next loop iteration, after the other connections' I/O.
    @exclusivity(unchecked) private var pendingInput: [UInt8] = []
    @exclusivity(unchecked) private var pendingInputStart = 0
    /// Work done on this turn's input (header fields; a stream opened counts more).
    @exclusivity(unchecked) var turnWork = 0
    /// Reading stopped while input waits for its turn.
    @exclusivity(unchecked) private var readingStopped = false
    @exclusivity(unchecked) var isDirty = false
    @exclusivity(unchecked) var floodGuard: FloodGuard
    /// Abuse found where the session or the service must not be re-entered (inside
    /// `nghttp2_session_mem_send`, or while the service answers): the connection ends with
    /// GOAWAY ENHANCE_YOUR_CALM at the next flush, for this reason.
    var pendingCalm: String?
    /// The connection's part of the shutdown (``DrainState``).
    private var drainState = DrainState()
    @exclusivity(unchecked) private var lastActivity: Int64
    private var idleTask: (any ScheduledTask)?
    private var lingerTask: (any ScheduledTask)?
    /// What the closures this connection hands out (reads, write completions, timers) hold
    /// instead of a weak reference: a weak reference gives the object a side table, and every
    /// retain and release of the connection then takes the runtime's slow path (the connection
    /// is retained and released in nghttp2's callbacks and calls; callgrind).
    private let handle = Handle()

    /// The connection from ``start()`` until ``close(reason:level:)``, then nothing.
    final class Handle {
        var connection: GRPCConnection?
    }

    init(id: UInt64, peer: String, stream: any ByteStream, transport: GRPCTransport) {
        self.id = id
        self.peer = peer
        self.stream = stream
        self.transport = transport
        self.logger = transport.logger.with([
            "connection": .int(Int64(id)), "peer": .string(peer), "transport": .string("grpc"),
        ])
        self.server = transport.server
        self.service = transport.service
        self.limits = transport.limits
        self.http2 = transport.http2Limits
        self.peerIsLocal = CallAuthenticator.isLocal(peer: peer)
        floodGuard = FloodGuard(limits: transport.http2Limits)
        self.clock = transport.clock
        self.scheduler = transport.scheduler
        lastActivity = transport.clock.now.unixMilliseconds
    }

    let clock: any AdClock
    let scheduler: any AdScheduler

    /// Creates the session, queues the server's SETTINGS and starts reading.
    func start() {
        guard
            let created = Self.makeSession(
                userData: Unmanaged.passUnretained(self).toOpaque(), limits: http2, allocator: allocator)
        else {
            close(reason: "cannot create an HTTP/2 session", level: .error)
            return
        }
        session = created
        var headers: [(name: String, value: String)] = [
            (":status", "200"), ("content-type", "application/grpc"), ("grpc-accept-encoding", "identity"),
        ]
        for entry in server.responseMetadata { headers.append((entry.key, entry.value)) }
        responseHeaders = GRPCHeaderBlock(headers)
        okTrailers = GRPCHeaderBlock([("grpc-status", "0")])
        // nghttp2 enforces a higher stream limit than the one the client is told (the frame
        // is rewritten in flush()): the streams between them are refused one by one.
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: Self.enforcedMaxConcurrentStreams(limits: http2)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(http2.maxHeaderListSize)),
        ]
        var rv = nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        if rv == 0 {
            rv = nghttp2_session_set_local_window_size(
                created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(http2.connectionWindowSize))
        }
        if rv != 0 {
            close(reason: "cannot configure the HTTP/2 session: \(Self.errorName(rv))", level: .error)
            return
        }
        do {
            handle.connection = self
            try stream.readStart { [handle] result in handle.connection?.didRead(result) }
        } catch {
            close(reason: "cannot read: \(error)", level: .warning)
            return
        }
        armIdleTimer()
        if !inReadCallback { flush() }
    }

    static func errorName(_ code: Int32) -> String { String(cString: nghttp2_strerror(code)) }

    // MARK: Reading

    private func didRead(_ result: Result<UnsafeRawBufferPointer, UVError>) {
        switch result {
        case .failure(let error):
            if error.isEndOfFile {
                close(reason: nil, level: .debug)
            } else {
                close(reason: "read failed: \(error)", level: .warning)
            }
        case .success(let bytes):
            if phase == .closingAfterFlush {
                // Dropped; the connection closes once its output is written and nothing more
                // is unread (flush; not inside nghttp2's own callbacks, where a stream that
                // delivers at once may call here).
                if !inReadCallback { flush() }
                return
            }
            guard phase == .open, session != nil else { return }
            lastActivity = clock.now.unixMilliseconds
            if hasPendingInput {
                // A stream that delivers after readStop (a prefix, TLS plaintext): behind the rest.
                pendingInput.append(contentsOf: bytes)
                return
            }
            if let used = receiveTurn(bytes), used < bytes.count {
                pendingInput.removeAll(keepingCapacity: true)
                pendingInput.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used...]))
                pendingInputStart = 0
                waitForTurn()
            }
            flush()
        }
    }

    private var hasPendingInput: Bool { pendingInputStart < pendingInput.count }

    /// Gives nghttp2 one turn of `bytes`: at most ``HTTP2Limits/inputBytesPerTurn`` of them, in
    /// pieces of ``inputPieceBytes``, fewer once the turn's header work ran out (header fields
    /// decoded and streams opened, counted by the callbacks). Pieces, not nghttp2's
    /// `NGHTTP2_ERR_PAUSE` from the header callback: a pause there left some connections'
    /// requests unprocessed for good (seen with 2000 provoked resets, nghttp2 1.52).
    /// - Returns: the bytes nghttp2 took; nil when the session ended.
    private func receiveTurn(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let limit = min(bytes.count, http2.inputBytesPerTurn)
        var offset = 0
        turnWork = 0
        while offset < limit, turnWork < http2.headerWorkPerTurn {
            guard phase == .open, let session else { return nil }
            inReadCallback = true
            let consumed = nghttp2_session_mem_recv(session, base + offset, min(limit - offset, Self.inputPieceBytes))
            inReadCallback = false
            if consumed < 0, pendingCalm != nil {
                // A callback stopped the read on abuse it found (onHeader).
                endIfCalmPending(session)
                return nil
            } else if consumed < 0 {
                // A protocol error or a flood nghttp2 detects (CONTINUATION, acks): GOAWAY (if
                // nghttp2 did not queue one already), then close once it is written.
                logger.warning("HTTP/2 session ended", ["error": .string(Self.errorName(Int32(consumed)))])
                _ = nghttp2_session_terminate_session(session, NGHTTP2_PROTOCOL_ERROR.rawValue)
                beginClosing()
                return nil
            }
            offset += consumed
        }
        return phase == .open ? offset : nil
    }

    /// How much of a turn nghttp2 gets at once: the turn's header work is checked between
    /// pieces (a piece of requests is ~5 of them).
    static let inputPieceBytes = 1024

    /// The turn ended with input left: stop reading until it has been worked on.
    private func waitForTurn() {
        readingStopped = true
        stream.readStop()
        transport.inputWaits(self)
    }

    /// The connection's next turn at the input it already read (from the transport, once per
    /// loop iteration): reading resumes once none is left.
    func continueInput() {
        guard phase == .open, hasPendingInput else {
            pendingInput = []
            pendingInputStart = 0
            return
        }
        lastActivity = clock.now.unixMilliseconds
        // A copy of the reference: a callback that closes the connection empties the property,
        // not the bytes nghttp2 is reading.
        let input = pendingInput
        let start = pendingInputStart
        let used = input.withUnsafeBytes { bytes in receiveTurn(UnsafeRawBufferPointer(rebasing: bytes[start...])) }
        guard let used, phase == .open else {
            pendingInput = []
            pendingInputStart = 0
            flush()
            return
        }
        pendingInputStart += used
        if hasPendingInput {
            transport.inputWaits(self)
            flush()
            return
        }
        pendingInput.removeAll(keepingCapacity: pendingInput.capacity <= 64 * 1024)
        pendingInputStart = 0
        flush()
        guard phase == .open else { return }
        readingStopped = false
        do {
            try stream.resumeReading()
        } catch {
            close(reason: "cannot read: \(error)", level: .warning)
        }
    }

    /// Ends the session after what is queued (a GOAWAY, answers) is written.
    func beginClosing() {
        guard phase == .open else { return }
        phase = .closingAfterFlush
        // Reading goes on (what arrives is dropped, didRead): once everything is written, a
        // client that went away is seen only by its end of file. Without it, a client that
        // sent a flood and closed without reading held its connection, and a slot of
        // limits.maxConnections, until the linger bound below (10 s; issue 28's abuse tests).
        endOpenCalls()
        if hasPendingInput || readingStopped {
            // Input that waited for its turn is not worked on any more; reading resumes, to
            // drop what arrives: a socket closed with unread bytes sends a TCP reset, and the
            // client's kernel may discard the GOAWAY before its reader sees it.
            pendingInput = []
            pendingInputStart = 0
            readingStopped = false
            try? stream.resumeReading()
        }
        idleTask?.cancel()
        idleTask = nil
        lingerTask = scheduler.schedule(at: clock.now + limits.partialFrameTimeout) { [handle] in
            handle.connection?.close(reason: "output not read before closing", level: .warning)
        }
    }

    /// GOAWAY with `code` (e.g. ENHANCE_YOUR_CALM for a flood), then close.
    func terminate(code: UInt32, reason: String) {
        guard phase == .open, let session else { return }
        logger.warning("closing connection", ["reason": .string(reason)])
        _ = nghttp2_session_terminate_session(session, code)
        beginClosing()
        if !inReadCallback { flush() }
    }

    // MARK: Writing

    /// Takes nghttp2's output and hands it to the socket; closes when the session is over.
    func flush() {
        isDirty = false
        guard phase != .closed, let session else { return }
        endIfCalmPending(session)
        while output.count + stream.queuedWriteBytes < limits.maxUnsentOutputPerConnection {
            var chunk: UnsafePointer<UInt8>? = nil
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 {
                close(reason: "HTTP/2 send failed: \(Self.errorName(Int32(count)))", level: .warning)
                return
            }
            guard count > 0, let chunk else { break }
            output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: count))
            // A reset just serialized may have been one too many (onFrameSent).
            endIfCalmPending(session)
        }
        if !settingsAdvertised, !output.isEmpty {
            settingsAdvertised = true
            if !Self.advertise(maxConcurrentStreams: UInt32(http2.maxConcurrentStreams), in: &output) {
                logger.error(
                    "the session's first SETTINGS frame was not found: the client is told the enforced stream limit",
                    ["limit": .int(Int64(Self.enforcedMaxConcurrentStreams(limits: http2)))])
            }
        }
        if !output.isEmpty {
            server.beforeAnswersLeave?()
            let failure = output.withUnsafeBytes { bytes in
                stream.writeNowOrQueue(bytes) { { [handle] error in handle.connection?.writeCompleted(error) } }
            }
            output.removeAll(keepingCapacity: output.capacity <= 256 * 1024)
            if let failure {
                close(reason: "write failed: \(failure)", level: stream.sawEndOfFile ? .debug : .warning)
                return
            }
        }
        if nghttp2_session_want_read(session) == 0 || phase == .closingAfterFlush,
            nghttp2_session_want_write(session) == 0, output.isEmpty, stream.queuedWriteBytes == 0,
            // Closing with unread bytes would reset the TCP connection (above, beginClosing):
            // they are read and dropped first, within the linger bound.
            phase != .closingAfterFlush || !stream.hasUnreadInput
        {
            close(reason: nil, level: .debug)
        }
    }

    /// GOAWAY ENHANCE_YOUR_CALM for ``pendingCalm``; the caller's loop sends it.
    private func endIfCalmPending(_ session: OpaquePointer) {
        guard let reason = pendingCalm else { return }
        pendingCalm = nil
        guard phase == .open else { return }
        logger.warning("closing connection", ["reason": .string(reason)])
        _ = nghttp2_session_terminate_session(session, Self.enhanceYourCalm)
        beginClosing()
    }

    private func writeCompleted(_ error: UVError?) {
        guard phase != .closed else { return }
        if let error {
            close(reason: "write failed: \(error)", level: stream.sawEndOfFile ? .debug : .warning)
            return
        }
        // nghttp2 may hold more than fit under the unsent-output bound.
        flush()
    }

    func markDirty() {
        guard !inReadCallback, !isDirty, phase != .closed else { return }
        isDirty = true
        transport.scheduleFlush(self)
    }

    // MARK: Timeouts

    private func armIdleTimer() {
        guard idleTask == nil, phase == .open else { return }
        let at = lastActivity + limits.idleTimeout.milliseconds
        idleTask = scheduler.schedule(at: AdInstant(unixMilliseconds: at)) { [handle] in handle.connection?.checkIdle()
        }
    }

    private func checkIdle() {
        idleTask = nil
        guard phase == .open else { return }
        let now = clock.now.unixMilliseconds
        if streams.isEmpty, now - lastActivity >= limits.idleTimeout.milliseconds {
            logger.info("closing idle connection", ["idleMilliseconds": .int(now - lastActivity)])
            if let session { _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue) }
            beginClosing()
            flush()
            return
        }
        if !streams.isEmpty { lastActivity = now }
        armIdleTimer()
    }

    // MARK: Drain and close

    /// Server shutdown, announced: health watchers hear NOT_SERVING and end UNAVAILABLE; a
    /// GOAWAY tells the client to open no more streams, and a PING after it marks when the
    /// client has read it. Calls go on being served until the service drains (the transport
    /// lets it once every connection acknowledged its PING, or a short limit ended); once that
    /// PING is acknowledged and the streams in flight are done, the final GOAWAY goes out and
    /// the connection closes (a client that never acknowledges is closed when the grace period
    /// ends).
    func drain(status: Status) {
        guard phase == .open, let session else { return }
        drainState.announce()
        for stream in streams.values.sorted(by: { $0.id < $1.id })
        where stream.route == .healthWatch && !stream.finished {
            send(stream, message: HealthService.response(.notServing))
            finish(stream, status: status)
        }
        _ = nghttp2_submit_shutdown_notice(session)
        // The GOAWAY goes out before the PING is queued (nghttp2 would send the PING first):
        // an acknowledgement of the PING then proves the client read the GOAWAY.
        flush()
        guard phase == .open, let open = self.session else { return }
        if nghttp2_submit_ping(open, UInt8(NGHTTP2_FLAG_NONE.rawValue), Self.drainPingData) == 0 {
            drainState.pingSent()
        }
        goAwayIfDrained()
        flush()
    }

    /// A PING acknowledgement arrived: the client has read everything sent before it.
    func pingAcknowledged() {
        guard drainState.pingAcknowledged() else { return }
        goAwayIfDrained()
        transport.announceIfAcknowledged()
    }

    /// Draining, still reading, and the client may still start a call: the drain's PING is not
    /// acknowledged yet (it may not have read the GOAWAY: it may still open streams), or a stream
    /// it opened before has not sent its whole request yet (a proxy may write a request's DATA
    /// after its acknowledgement of the PING; that call is served, not refused by the drain).
    var mayStillStartCalls: Bool {
        guard phase == .open else { return false }
        switch drainState.state {
        case .serving: return false
        case .awaitingPingAcknowledgement: return true
        case .announced: return streams.values.contains { !$0.dispatched && !$0.finished }
        }
    }

    /// After a stream was dispatched or closed: while announcing, this connection may be the
    /// last one the transport waited for.
    func streamSettled() {
        if drainState.state == .announced { transport.announceIfAcknowledged() }
    }

    /// The opaque data of the drain's PING.
    private static let drainPingData: [UInt8] = Array("drain\0\0\0".utf8)

    /// While draining, the last stream done and the drain's PING acknowledged: the final GOAWAY.
    func goAwayIfDrained() {
        guard drainState.state == .announced, phase == .open, streams.isEmpty, let session else { return }
        _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
        beginClosing()
    }

    /// Closes now; open calls end without an answer.
    func close(reason: String?, level: LogLevel) {
        guard phase != .closed else { return }
        phase = .closed
        handle.connection = nil
        endOpenCalls()
        idleTask?.cancel()
        idleTask = nil
        lingerTask?.cancel()
        lingerTask = nil
        if let session { nghttp2_session_del(session) }
        session = nil
        // Every block is back (nghttp2_session_del frees the session's memory).
        allocator.releaseAll()
        streams.removeAll()
        spareStreams = []
        headerStream = nil
        lastStream = nil
        output = []
        pendingInput = []
        pendingInputStart = 0
        if let reason { logger.log(level, "connection closed", ["reason": .string(reason)]) }
        stream.close()
        transport.connectionClosed(self)
    }

    /// Withdraws every open call of the service (parked borrows, watches) without answering.
    private func endOpenCalls() {
        for stream in streams.values.sorted(by: { $0.id < $1.id }) {
            if let call = stream.call {
                stream.call = nil
                service.end(call, answering: nil)
            }
        }
    }
}

/// A gRPC connection's part of the shutdown: serving; GOAWAY sent and its PING not yet
/// acknowledged (the client may still open streams, which are served); announced (the final
/// GOAWAY may go once the streams in flight are done). One mutating method per event.
struct DrainState: Equatable {
    enum State: Equatable {
        case serving
        /// The first GOAWAY went out; the PING after it is not acknowledged yet.
        case awaitingPingAcknowledgement
        /// The client has read the GOAWAY (or no PING could be sent).
        case announced
    }

    private(set) var state = State.serving

    /// The first GOAWAY went out (no PING yet: nothing to wait for).
    mutating func announce() {
        if state == .serving { state = .announced }
    }

    /// The drain's PING went out after the GOAWAY.
    mutating func pingSent() {
        if state == .announced { state = .awaitingPingAcknowledgement }
    }

    /// A PING acknowledgement arrived. - Returns: whether it was the one the drain waited for.
    mutating func pingAcknowledged() -> Bool {
        guard state == .awaitingPingAcknowledgement else { return false }
        state = .announced
        return true
    }
}
