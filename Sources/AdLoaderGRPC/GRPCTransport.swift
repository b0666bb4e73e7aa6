import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdLoaderWire

/// gRPC over HTTP/2 cleartext (prior knowledge): accepts byte streams (from the daemon's
/// protocol sniffer, or tests), runs one nghttp2 session per connection, enforces the
/// connection limit, flushes connections once per loop iteration, and drains them with GOAWAY.
///
/// Calls of `adloader.v1.NativeAdLoader` go to its ``AdLoaderService``, the same as the
/// framed transport's; `grpc.health.v1.Health` and server reflection are answered here.
///
/// - Important: loop-confined.
public final class GRPCTransport: ByteStreamAcceptor {
    private enum State { case running, draining, stopped }

    public let service: AdLoaderService
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
    private var state = State.running
    private var graceTask: (any ScheduledTask)?
    /// Called once when, after ``beginDrain(status:gracePeriod:)``, the last connection closed.
    public var onDrained: (() -> Void)?

    /// - Parameters:
    ///   - limits: the limits shared with the framed transport (message size, idle timeout,
    ///     unsent output, connections).
    ///   - http2Limits: the HTTP/2 settings and flood bounds.
    ///   - deferred: runs the flush of connections answered outside their own read callback.
    public init(
        service: AdLoaderService, limits: ServerLimits, http2Limits: HTTP2Limits = HTTP2Limits(), clock: any AdClock,
        scheduler: any AdScheduler, deferred: any DeferredWork, logger: Logger
    ) {
        self.service = service
        self.limits = limits
        self.http2Limits = http2Limits
        self.clock = clock
        self.scheduler = scheduler
        self.deferred = deferred
        self.logger = logger
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    /// Takes a stream whose first bytes are the HTTP/2 client preface (or will be): serves it,
    /// or closes it at once (over ``ServerLimits/maxConnections``, or while draining).
    public func accept(_ stream: any ByteStream, peer: String) {
        guard state == .running, connections.count < limits.maxConnections else {
            logger.warning(
                "connection refused", ["peer": .string(peer), "transport": .string("grpc"),
                "reason": .string(state == .running ? "too many connections" : "shutting down")])
            stream.close()
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = GRPCConnection(id: id, peer: peer, stream: stream, transport: self)
        connections[id] = connection
        logger.debug("connection accepted", ["connection": .int(Int64(id)), "peer": .string(peer), "transport": .string("grpc")])
        connection.start()
    }

    /// Announces the shutdown on every connection (GOAWAY; health watchers hear NOT_SERVING)
    /// and closes each when its streams are done or its client closes it, or all of them when
    /// `gracePeriod` ends. Call after the service began its drain.
    public func beginDrain(status: Status, gracePeriod: Duration) {
        guard state == .running else { return }
        state = .draining
        for connection in sortedConnections { connection.drain(status: status) }
        graceTask = scheduler.schedule(at: clock.now + gracePeriod) { [weak self] in
            self?.closeAll(reason: "shutdown grace period ended")
        }
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
        for connection in sortedConnections { connection.close(reason: "server stopped", level: .warning) }
        deferred.close()
    }

    private var sortedConnections: [GRPCConnection] { connections.values.sorted { $0.id < $1.id } }

    private func finishIfDrained() {
        guard state == .draining, connections.isEmpty else { return }
        graceTask?.cancel()
        graceTask = nil
        let drained = onDrained
        onDrained = nil
        drained?()
    }

    func connectionClosed(_ connection: GRPCConnection) {
        connections[connection.id] = nil
        finishIfDrained()
    }

    func scheduleFlush(_ connection: GRPCConnection) {
        dirty.append(connection)
        deferred.request { [unowned self] in self.flushDirty() }
    }

    private func flushDirty() -> Bool {
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for connection in batch where connection.isDirty { connection.flush() }
        return !dirty.isEmpty
    }
}
