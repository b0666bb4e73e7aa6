public import AdLoaderLogging
public import AdLoaderService
public import AdLoaderTime
public import AdLoaderUV
public import AdLoaderWire

/// gRPC over HTTP/2 cleartext (prior knowledge): accepts byte streams (from the daemon's
/// protocol sniffer, or tests), runs one nghttp2 session per connection, enforces the
/// connection limit, flushes connections once per loop iteration, and drains them with GOAWAY.
///
/// Calls of `adloader.v1.NativeAdLoader` go to its ``AdLoaderService``, the same as the
/// framed transport's; `grpc.health.v1.Health` and server reflection are answered here.
///
/// - Important: loop-confined.
public final class GRPCTransport: ByteStreamAcceptor, ServerTransport {
    /// Running; announcing the shutdown (GOAWAY and PING out, waiting for every client's
    /// acknowledgement or the announce limit; calls still served); draining (closing
    /// connections as their streams end); stopped.
    private enum State { case running, announcing, draining, stopped }

    /// What this transport shares with the others: service, connection limit, admission,
    /// response metadata, the encoded-ad cache.
    public let server: ServerContext
    public var service: AdLoaderService { server.service }
    public let name = "grpc"
    let limits: ServerLimits
    let http2Limits: HTTP2Limits
    let logger: Logger
    let clock: any AdClock
    let scheduler: any AdScheduler
    let health = HealthService()
    let reflection = ReflectionService()
    private let deferred: any DeferredWork
    private var connections: [UInt64: GRPCConnection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var dirty: [GRPCConnection] = []
    /// Connections whose turn at their input ended with some left (``GRPCConnection/continueInput()``).
    private var waitingInput: [GRPCConnection] = []
    /// A task due now while input waits, so that the loop polls without sleeping between turns.
    private var wakeTask: (any ScheduledTask)?
    private var state = State.running
    private var graceTask: (any ScheduledTask)?
    /// Ends the announcing state at the announce limit.
    private var announceTask: (any ScheduledTask)?
    /// Called once when, after ``beginDrain(status:gracePeriod:announceLimit:)``, the last
    /// connection closed.
    public var onDrained: (() -> Void)?
    /// Called once when, after ``beginDrain(status:gracePeriod:announceLimit:)``, every
    /// connection's client has read the GOAWAY (acknowledged the PING after it) or closed, or
    /// when the announce limit ended: from then on no compliant client opens a new stream, so
    /// the service can begin its own drain without refusing a call a client wrote before it
    /// knew. Before then, calls are served as usual.
    public var onAnnounced: (() -> Void)?

    /// - Parameters:
    ///   - limits: the limits shared with the framed transport (message size, idle timeout,
    ///     unsent output, connections).
    ///   - http2Limits: the HTTP/2 settings and flood bounds.
    ///   - deferred: runs the flush of connections answered outside their own read callback.
    public init(
        server: ServerContext, http2Limits: HTTP2Limits = HTTP2Limits(), clock: any AdClock,
        scheduler: any AdScheduler, deferred: any DeferredWork, logger: Logger
    ) {
        self.server = server
        self.limits = server.limits
        self.http2Limits = http2Limits
        self.clock = clock
        self.scheduler = scheduler
        self.deferred = deferred
        self.logger = logger
    }

    /// A transport of its own server (tests, fuzzing).
    public convenience init(
        service: AdLoaderService, limits: ServerLimits, http2Limits: HTTP2Limits = HTTP2Limits(), clock: any AdClock,
        scheduler: any AdScheduler, deferred: any DeferredWork, logger: Logger
    ) {
        self.init(
            server: ServerContext(service: service, limits: limits), http2Limits: http2Limits, clock: clock,
            scheduler: scheduler, deferred: deferred, logger: logger)
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    /// Takes a stream whose first bytes are the HTTP/2 client preface (or will be): serves it,
    /// or closes it at once (over ``ServerLimits/maxConnections``, all transports together,
    /// or while draining).
    public func accept(_ stream: any ByteStream, peer: String) {
        if let status = server.admitConnection(transport: name, draining: state != .running) {
            logger.warning(
                "connection refused",
                [
                    "peer": .string(peer), "transport": .string("grpc"),
                    "reason": .string(status.message),
                ])
            stream.close()
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = GRPCConnection(id: id, peer: peer, stream: stream, transport: self)
        connections[id] = connection
        logger.debug(
            "connection accepted", ["connection": .int(Int64(id)), "peer": .string(peer), "transport": .string("grpc")])
        connection.start()
    }

    /// Whether the shutdown began (health answers NOT_SERVING from then on).
    public var isDraining: Bool { state == .announcing || state == .draining }

    /// Announces the shutdown on every connection (GOAWAY and a PING; health watchers hear
    /// NOT_SERVING), calls ``onAnnounced`` once every client acknowledged its PING or closed
    /// (at the latest when `announceLimit` ends), and closes each connection when its streams
    /// are done and its PING acknowledged, or its client closes it, or all of them when
    /// `gracePeriod` ends. Calls go on being served as usual until the service drains.
    public func beginDrain(status: Status, gracePeriod: Duration, announceLimit: Duration) {
        guard state == .running else { return }
        state = .announcing
        for connection in sortedConnections { connection.drain(status: status) }
        graceTask = scheduler.schedule(at: clock.now + gracePeriod) { [weak self] in
            self?.closeAll(reason: "shutdown grace period ended")
        }
        announceTask = scheduler.schedule(at: clock.now + announceLimit) { [weak self] in
            guard let self else { return }
            let unacknowledged = self.connections.values.filter(\.mayStillStartCalls).count
            self.logger.info(
                "shutdown announce limit ended", ["unacknowledgedConnections": .int(Int64(unacknowledged))])
            self.finishAnnouncing()
        }
        finishIfDrained()
    }

    // MARK: ServerTransport

    /// GOAWAY and a PING on every connection; announced when every client acknowledged its
    /// PING or closed, at the latest at `announceLimit` (see ``beginDrain(status:gracePeriod:announceLimit:)``).
    public func announceShutdown(
        status: Status, gracePeriod: Duration, announceLimit: Duration, whenAnnounced: @escaping () -> Void
    ) {
        onAnnounced = whenAnnounced
        beginDrain(status: status, gracePeriod: gracePeriod, announceLimit: announceLimit)
    }

    /// The connections already close as their streams end (the announce set that going);
    /// `whenDrained` once the last did. The grace period of the announce still applies.
    public func drain(status: Status, gracePeriod: Duration, whenDrained: @escaping () -> Void) {
        onDrained = whenDrained
        finishIfDrained()
    }

    /// Closes every connection now.
    public func closeAll(reason: String) {
        for connection in sortedConnections { connection.close(reason: reason, level: .warning) }
        finishIfDrained()
    }

    /// Stops for good: closes every connection and the deferred work.
    public func stop() {
        state = .stopped
        graceTask?.cancel()
        graceTask = nil
        announceTask?.cancel()
        announceTask = nil
        onAnnounced = nil
        for connection in sortedConnections { connection.close(reason: "server stopped", level: .warning) }
        deferred.close()
    }

    private var sortedConnections: [GRPCConnection] { connections.values.sorted { $0.id < $1.id } }

    /// Every connection acknowledged the drain's PING (or closed): announced.
    func announceIfAcknowledged() {
        guard state == .announcing, !connections.values.contains(where: \.mayStillStartCalls) else { return }
        finishAnnouncing()
    }

    private func finishAnnouncing() {
        guard state == .announcing else { return }
        state = .draining
        announceTask?.cancel()
        announceTask = nil
        let announced = onAnnounced
        onAnnounced = nil
        announced?()
    }

    /// Announced first (so the service drains before the transport reports it is done).
    private func finishIfDrained() {
        announceIfAcknowledged()
        guard state == .draining, connections.isEmpty else { return }
        graceTask?.cancel()
        graceTask = nil
        let drained = onDrained
        onDrained = nil
        drained?()
    }

    func connectionClosed(_ connection: GRPCConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        server.connectionClosed(transport: name)
        finishIfDrained()
    }

    func scheduleFlush(_ connection: GRPCConnection) {
        dirty.append(connection)
        deferred.request { [unowned self] in self.runDeferred() }
    }

    /// `connection` read more than one turn's worth: its next turn comes in the next loop
    /// iteration, once every connection ready to read had its own (round robin).
    func inputWaits(_ connection: GRPCConnection) {
        waitingInput.append(connection)
        deferred.request { [unowned self] in self.runDeferred() }
    }

    /// Before the loop polls: one more turn for each connection with input waiting, then the
    /// flush of connections answered outside their read callback.
    private func runDeferred() -> Bool {
        if !waitingInput.isEmpty {
            let batch = waitingInput
            waitingInput.removeAll(keepingCapacity: true)
            for connection in batch { connection.continueInput() }
            if !waitingInput.isEmpty, wakeTask == nil {
                // The poll after this must not sleep: the waiting input is already read.
                wakeTask = scheduler.schedule(at: clock.now) { [weak self] in self?.wakeTask = nil }
            }
        }
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for connection in batch where connection.isDirty { connection.flush() }
        return !dirty.isEmpty || !waitingInput.isEmpty
    }
}
