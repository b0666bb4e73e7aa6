public import AdLoaderLogging
public import AdLoaderService
public import AdLoaderTime
public import AdLoaderUV
public import AdLoaderWire

/// The framed protocol's connections: accepts byte streams from listeners (or tests), enforces
/// the connection limit, flushes connections once per loop iteration, and drains them.
///
/// It knows bytes and connections; calls go to its ``AdLoaderService``.
///
/// - Important: loop-confined.
public final class FramedTransport: ByteStreamAcceptor, ServerTransport {
    private enum State { case running, draining, stopped }

    /// What this transport shares with the others: service, connection limit, admission.
    public let server: ServerContext
    public var service: AdLoaderService { server.service }
    public let name = "framed"
    let limits: ServerLimits
    let logger: Logger
    let clock: any AdClock
    let scheduler: any AdScheduler
    /// Encodings of lent ads, shared by every connection of every transport.
    var adEncodings: EncodedAdCache { server.adEncodings }
    private let deferred: any DeferredWork
    // Stored properties are `@exclusivity(unchecked)`: loop-confined, and no method holds an
    // access across a call that re-enters it.
    @exclusivity(unchecked) private var connections: [UInt64: Connection] = [:]
    @exclusivity(unchecked) private var nextConnectionID: UInt64 = 1
    @exclusivity(unchecked) private var dirty: [Connection] = []
    @exclusivity(unchecked) private var state = State.running
    @exclusivity(unchecked) private var graceTask: (any ScheduledTask)?
    /// Called once when, after ``beginDrain(status:gracePeriod:)``, the last connection closed.
    public var onDrained: (() -> Void)?

    /// - Parameters:
    ///   - deferred: runs the flush of connections answered outside their own read callback
    ///     (timers, Watch events, parked borrows served) once the loop's callbacks are done.
    public init(
        server: ServerContext, clock: any AdClock, scheduler: any AdScheduler, deferred: any DeferredWork,
        logger: Logger
    ) {
        self.server = server
        self.limits = server.limits
        self.clock = clock
        self.scheduler = scheduler
        self.deferred = deferred
        self.logger = logger
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    public var isDraining: Bool { state == .draining }

    /// A transport of its own server (tests, a daemon with one transport).
    public convenience init(
        service: AdLoaderService, limits: ServerLimits, clock: any AdClock, scheduler: any AdScheduler,
        deferred: any DeferredWork, logger: Logger
    ) {
        self.init(
            server: ServerContext(service: service, limits: limits), clock: clock, scheduler: scheduler,
            deferred: deferred, logger: logger)
    }

    /// Takes a freshly accepted stream: serves it, or refuses it with a call-0 status and
    /// closes it (over ``ServerLimits/maxConnections``, all transports together, or while
    /// draining).
    /// - Parameter peer: how the logs name the client ("127.0.0.1:5000", "unix").
    public func accept(_ stream: any FramedByteStream, peer: String) {
        if let status = server.admitConnection(transport: name, draining: state != .running) {
            logger.warning(
                "connection refused",
                ["peer": .string(peer), "limit": .int(Int64(limits.maxConnections)), "reason": .string(status.message)])
            // Best effort, never blocking: the preface and a call-0 status, then close.
            var refusal = ProtocolPreface.bytes
            ResponseFrame.append(callID: 0, status: status, to: &refusal)
            _ = refusal.withUnsafeBytes { try? stream.tryWrite($0) }
            stream.close()
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = Connection(id: id, peer: peer, stream: stream, transport: self)
        connections[id] = connection
        logger.debug("connection accepted", ["connection": .int(Int64(id)), "peer": .string(peer)])
        connection.start()
    }

    /// Announces the shutdown on every connection (call 0, `status`) and closes each when its
    /// client does, or all of them when `gracePeriod` ends. Call after the service began its
    /// drain, so open calls are already answered.
    public func beginDrain(status: Status, gracePeriod: Duration) {
        guard state == .running else { return }
        state = .draining
        for connection in sortedConnections { connection.drain(status: status) }
        graceTask = scheduler.schedule(at: clock.now + gracePeriod) { [weak self] in
            self?.closeAll(reason: "shutdown grace period ended")
        }
        finishIfDrained()
    }

    // MARK: ServerTransport

    /// The framed protocol has no announcement apart from its drain's call-0 status: announced at once.
    public func announceShutdown(
        status: Status, gracePeriod: Duration, announceLimit: Duration, whenAnnounced: @escaping () -> Void
    ) {
        whenAnnounced()
    }

    public func drain(status: Status, gracePeriod: Duration, whenDrained: @escaping () -> Void) {
        onDrained = whenDrained
        beginDrain(status: status, gracePeriod: gracePeriod)
    }

    /// Closes every connection now (pending writes are cancelled).
    public func closeAll(reason: String) {
        for connection in sortedConnections { connection.close(reason: reason, level: .warning) }
        finishIfDrained()
    }

    /// Stops for good: closes every connection and the deferred work.
    public func stop() {
        state = .stopped
        graceTask?.cancel()
        graceTask = nil
        for connection in sortedConnections { connection.close(reason: "server stopped", level: .warning) }
        deferred.close()
    }

    private var sortedConnections: [Connection] { connections.values.sorted { $0.id < $1.id } }

    private func finishIfDrained() {
        guard state == .draining, connections.isEmpty else { return }
        graceTask?.cancel()
        graceTask = nil
        let drained = onDrained
        onDrained = nil
        drained?()
    }

    func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        server.connectionClosed(transport: name)
        finishIfDrained()
    }

    /// Queues `connection` to be flushed after this loop iteration's callbacks.
    func scheduleFlush(_ connection: Connection) {
        dirty.append(connection)
        deferred.request { [unowned self] in self.flushDirty() }
    }

    /// Flushes the connections queued by ``scheduleFlush(_:)``.
    /// - Returns: whether more were queued meanwhile (the deferred work runs again).
    private func flushDirty() -> Bool {
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for connection in batch where connection.isDirty { connection.flush() }
        return !dirty.isEmpty
    }
}
