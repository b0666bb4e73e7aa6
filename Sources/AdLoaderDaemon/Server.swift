import AdLoaderCore
import AdLoaderLogging
import AdLoaderUV
import AdLoaderWire
import AdSources
import CLibUV
#if canImport(Glibc)
import Glibc
#endif

/// The daemon: one libuv loop hosting the loader, its listeners and connections.
///
/// Lifecycle: ``init(configuration:logger:)`` builds everything, ``start()`` binds the
/// listeners, ``run()`` serves until SIGTERM/SIGINT (or ``beginShutdown(reason:)``), then
/// drains: stops accepting, ends parked borrows and watches with UNAVAILABLE, announces the
/// shutdown with a call-0 UNAVAILABLE frame, answers calls still arriving with UNAVAILABLE
/// until each client closes its connection (forcibly after the grace period), then closes
/// every handle and the loop.
///
/// - Important: loop-confined: create it, start and run it on one thread.
public final class Server {
    /// A bound listener, as printed at start.
    public enum Address: Hashable, Sendable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        case unix(path: String)

        public var description: String {
            switch self {
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case .unix(let path): "unix:\(path)"
            }
        }
    }

    private enum State { case created, running, draining, stopped }

    public let configuration: ServerConfiguration
    let limits: ServerLimits
    let logger: Logger
    let loop: UVLoop
    let clock: LoopClock
    let loader: NativeAdvertisementLoader
    /// Encodings of lent ads, shared by every connection of this loop.
    let adEncodings = EncodedAdCache()
    private let flushIdle: UVIdle
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) private var listeners: [(handle: UVStream, address: Address)] = []
    @exclusivity(unchecked) private var signals: [UVSignal] = []
    @exclusivity(unchecked) private var connections: [UInt64: Connection] = [:]
    @exclusivity(unchecked) private var nextConnectionID: UInt64 = 1
    @exclusivity(unchecked) private var dirty: [Connection] = []
    @exclusivity(unchecked) private var state = State.created
    @exclusivity(unchecked) private var graceTask: (any ScheduledTask)?
    var isDraining: Bool { state == .draining }
    /// Borrows parked on the loader, all connections together.
    @exclusivity(unchecked) var parkedBorrowCount = 0

    /// Builds the loop, clock, demand sources and loader.
    /// - Throws: ``ConfigError`` for a bad loader or source; ``UVError`` when libuv fails.
    public init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.limits = configuration.limits
        self.logger = logger
        loop = try UVLoop()
        // Locals until everything is built, so a failure can close what exists.
        var createdClock: LoopClock?
        var createdIdle: UVIdle?
        do {
            let clock = try LoopClock(loop: loop)
            createdClock = clock
            let flushIdle = try UVIdle(loop: loop)
            createdIdle = flushIdle
            var sources: [String: any DemandSource] = [:]
            for (name, settings) in configuration.sources {
                sources[name] = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
            }
            loader = try NativeAdvertisementLoader(
                loaders: configuration.loaders, sources: sources, clock: clock, scheduler: clock,
                idSeed: UInt64(clock.now.unixMilliseconds))
            self.clock = clock
            self.flushIdle = flushIdle
        } catch {
            _ = Self.abandon(loop, closing: [createdClock?.close, createdIdle?.close].compactMap { $0 })
            throw error
        }
    }

    /// The addresses bound by ``start()``.
    public var addresses: [Address] { listeners.map(\.address) }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    /// Binds every listener and installs the signal handlers.
    /// - Returns: the bound addresses (with the real port when port 0 was asked for).
    /// - Throws: ``UVError`` naming the failing call (e.g. `uv_tcp_bind: EADDRINUSE`).
    @discardableResult
    public func start() throws(UVError) -> [Address] {
        precondition(state == .created)
        // Inherited masks (test runners, some supervisors) would swallow SIGTERM/SIGINT;
        // a peer that resets must not kill the daemon with SIGPIPE.
        UVSignal.unblockTerminationSignals()
        signal(SIGPIPE, SIG_IGN)
        do {
            let tcp = try UVTCPHandle(loop: loop)
            listeners.append((tcp, .tcp(host: configuration.listeners.host, port: configuration.listeners.port)))
            try tcp.bind(host: configuration.listeners.host, port: configuration.listeners.port)
            let bound = tcp.localAddress ?? (configuration.listeners.host, configuration.listeners.port)
            listeners[listeners.count - 1].address = .tcp(host: bound.host, port: bound.port)
            try tcp.listen { [unowned self, unowned tcp] error in self.accept(from: tcp, error: error) }
            if let path = configuration.listeners.unixSocket {
                let pipe = try UVPipeHandle(loop: loop)
                listeners.append((pipe, .unix(path: path)))
                try pipe.bind(path: path, mode: configuration.listeners.unixSocketMode)
                try pipe.listen { [unowned self, unowned pipe] error in self.accept(from: pipe, error: error) }
            }
            for number in [SIGTERM, SIGINT] {
                let handle = try UVSignal(loop: loop)
                signals.append(handle)
                try handle.start(number) { [unowned self] number in self.signalReceived(number) }
            }
        } catch {
            closeEverything()
            state = .stopped
            throw error
        }
        state = .running
        for address in addresses {
            logger.info("listening", ["address": .string(address.description)])
        }
        return addresses
    }

    /// Serves until shut down, then closes every handle and the loop.
    /// - Returns: the process exit status: 0 when the loop closed cleanly.
    public func run() -> Int32 {
        if state == .running || state == .draining { loop.run() }
        closeEverything()
        // Close callbacks run on the next iterations.
        while loop.runNoWait() {}
        do {
            try loop.close()
        } catch {
            logger.error(
                "event loop did not close", ["error": .string("\(error)"), "open": .string(loop.openHandleDescriptions.joined(separator: ", "))])
            return 1
        }
        logger.info("stopped")
        return 0
    }

    /// Starts the graceful shutdown: stop accepting, end parked borrows and watches with
    /// UNAVAILABLE, announce it on every connection, answer later calls UNAVAILABLE, and close
    /// each connection when its client does (forcibly after the grace period).
    public func beginShutdown(reason: String) {
        guard state == .running else { return }
        state = .draining
        logger.info(
            "shutting down",
            ["reason": .string(reason), "connections": .int(Int64(connections.count)),
             "parkedBorrows": .int(Int64(parkedBorrowCount))])
        for (handle, _) in listeners { handle.close() }
        listeners.removeAll()
        removeUnixSocketFile()
        // Parked borrows complete with .unavailable through their connections.
        loader.shutdown()
        let unavailable = Status(code: .unavailable, message: "server shutting down")
        for connection in connections.values.sorted(by: { $0.id < $1.id }) {
            connection.drain(status: unavailable)
        }
        graceTask = clock.schedule(at: clock.now + limits.shutdownGracePeriod) { [unowned self] in
            self.forceClose(reason: "shutdown grace period ended")
        }
        finishIfDrained()
    }

    private func signalReceived(_ number: Int32) {
        let name = number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
        switch state {
        case .running: beginShutdown(reason: name)
        case .draining: forceClose(reason: "second \(name)")
        default: break
        }
    }

    private func forceClose(reason: String) {
        for connection in connections.values.sorted(by: { $0.id < $1.id }) {
            connection.close(reason: reason, level: .warning)
        }
        finishIfDrained()
    }

    private func finishIfDrained() {
        guard state == .draining, connections.isEmpty else { return }
        state = .stopped
        graceTask?.cancel()
        closeEverything()
    }

    /// Closes every handle the server owns; the loop then runs out of work.
    private func closeEverything() {
        for connection in connections.values { connection.close(reason: "server stopped", level: .warning) }
        for (handle, _) in listeners { handle.close() }
        listeners.removeAll()
        for handle in signals { handle.close() }
        signals.removeAll()
        flushIdle.close()
        clock.close()
    }

    private func removeUnixSocketFile() {
        if let path = configuration.listeners.unixSocket { unlink(path) }
    }

    // MARK: Connections

    private func accept(from listener: UVStream, error: UVError?) {
        if let error {
            logger.warning("accept failed", ["error": .string("\(error)")])
            return
        }
        let client: UVStream
        do {
            client = listener is UVTCPHandle ? try UVTCPHandle(loop: loop) : try UVPipeHandle(loop: loop)
        } catch {
            logger.error("cannot create a connection handle", ["error": .string("\(error)")])
            return
        }
        do {
            try listener.accept(into: client)
        } catch {
            logger.warning("accept failed", ["error": .string("\(error)")])
            client.close()
            return
        }
        let peer: String
        if let tcp = client as? UVTCPHandle {
            tcp.setNoDelay(true)
            peer = tcp.peerAddress.map { Address.tcp(host: $0.host, port: $0.port).description } ?? "tcp"
        } else {
            peer = "unix"
        }
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
            _ = refusal.withUnsafeBytes { try? client.tryWrite($0) }
            client.close()
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = Connection(id: id, peer: peer, stream: client, server: self)
        connections[id] = connection
        logger.debug("connection accepted", ["connection": .int(Int64(id)), "peer": .string(peer)])
        connection.start()
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.id] = nil
        finishIfDrained()
    }

    /// Queues `connection` to be flushed after this loop iteration's I/O.
    func scheduleFlush(_ connection: Connection) {
        dirty.append(connection)
        if !flushIdle.isActive, !flushIdle.isClosing {
            flushIdle.start { [unowned self] in self.flushDirty() }
        }
    }

    private func flushDirty() {
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for connection in batch where connection.isDirty { connection.flush() }
        if dirty.isEmpty { flushIdle.stop() }
    }

    /// Closes a loop whose setup failed half-way: each owner closes its handle through
    /// its own `close()` (so close callbacks run, retains are released and memory freed),
    /// then the loop runs until they have, and closes.
    /// - Returns: true when `uv_loop_close` succeeded.
    static func abandon(_ loop: UVLoop, closing owners: [() -> Void]) -> Bool {
        for close in owners { close() }
        while loop.runNoWait() {}
        do {
            try loop.close()
            return true
        } catch {
            return false
        }
    }
}
