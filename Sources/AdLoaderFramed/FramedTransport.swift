import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdLoaderWire

/// The framed protocol's connections: accepts byte streams from listeners (or tests), enforces
/// the connection limit, flushes connections once per loop iteration, and drains them.
///
/// It knows bytes and connections; calls go to its ``AdLoaderService``.
///
/// - Important: loop-confined.
public final class FramedTransport: ByteStreamAcceptor {
    private enum State { case running, draining, stopped }

    public let service: AdLoaderService
    let limits: ServerLimits
    let logger: Logger
    let clock: any AdClock
    let scheduler: any AdScheduler
    /// Encodings of lent ads, shared by every connection (the service's).
    var adEncodings: EncodedAdCache { service.adEncodings }
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
        service: AdLoaderService, limits: ServerLimits, clock: any AdClock, scheduler: any AdScheduler,
        deferred: any DeferredWork, logger: Logger
    ) {
        self.service = service
        self.limits = limits
        self.clock = clock
        self.scheduler = scheduler
        self.deferred = deferred
        self.logger = logger
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    public var isDraining: Bool { state == .draining }

    /// Takes a freshly accepted stream: serves it, or refuses it with a call-0 status and
    /// closes it (over ``ServerLimits/maxConnections``, or while draining).
    /// - Parameter peer: how the logs name the client ("127.0.0.1:5000", "unix").
    public func accept(_ stream: any FramedByteStream, peer: String) {
        guard state == .running, connections.count < limits.maxConnections else {
            logger.warning(
                "connection refused: too many connections",
                ["peer": .string(peer), "limit": .int(Int64(limits.maxConnections))])
            // Best effort, never blocking: the preface and a call-0 status, then close.
            var refusal = ProtocolPreface.bytes
            let status = state == .running
                ? Status(code: .resourceExhausted, message: "connections: limit of \(limits.maxConnections) reached")
                : Status(code: .unavailable, message: "server shutting down")
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
        connections[connection.id] = nil
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
