public import AdLoaderLogging
public import AdLoaderTime
public import AdLoaderUV

/// The admin HTTP listener: its own TCP port on the daemon's loop, serving GET requests to a
/// handler (the daemon's routes: `/metrics`, `/healthz`, `/readyz`, the dashboard).
///
/// HTTP/1.1 with keep-alive and pipelining; requests are parsed by ``HTTPRequestParser`` and
/// answered in order, synchronously, by the handler. Anything but GET is answered 405. Limits
/// (``AdminLimits``) close only the offending connection, after an HTTP error answer.
///
/// - Important: loop-confined. ``close()`` stops listening and closes every connection.
public final class AdminServer {
    /// What answers a GET request; runs on the loop.
    public typealias Handler = (HTTPRequestHead) -> HTTPResponse

    /// The bound host and port (the real port when 0 was asked for).
    public private(set) var host: String
    public private(set) var port: Int
    let loop: UVLoop
    let limits: AdminLimits
    let clock: any AdClock
    let scheduler: any AdScheduler
    let logger: Logger
    let handler: Handler
    private let listener: UVTCPHandle
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    private var isClosed = false
    /// Connections refused because ``AdminLimits/maxConnections`` were open.
    public private(set) var refusedConnections: UInt64 = 0

    /// Binds and listens on `host:port`.
    /// - Throws: ``UVError`` naming the failing call (e.g. `uv_tcp_bind: EADDRINUSE`).
    public init(
        loop: UVLoop, host: String, port: Int, limits: AdminLimits, clock: any AdClock, scheduler: any AdScheduler,
        logger: Logger, handler: @escaping Handler
    ) throws(UVError) {
        self.loop = loop
        self.host = host
        self.port = port
        self.limits = limits
        self.clock = clock
        self.scheduler = scheduler
        self.logger = logger
        self.handler = handler
        listener = try UVTCPHandle(loop: loop)
        do {
            try listener.bind(host: host, port: port)
            if let bound = listener.localAddress { (self.host, self.port) = bound }
            try listener.listen { [unowned self] error in self.accept(error: error) }
        } catch {
            isClosed = true
            listener.close()
            throw error
        }
    }

    /// Open admin connections.
    public var connectionCount: Int { connections.count }

    /// Stops listening and closes every connection.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        listener.close()
        for connection in connections.values { connection.close() }
    }

    func connectionClosed(_ connection: AdminConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// Answers one complete request: GET goes to the handler, anything else is refused.
    func respond(to request: HTTPRequestHead) -> HTTPResponse {
        guard request.method == "GET" else {
            return HTTPResponse(
                status: .methodNotAllowed, text: "only GET is served here\n",
            ).with(header: "Allow", "GET")
        }
        return handler(request)
    }

    private func accept(error: UVError?) {
        if let error {
            logger.warning("admin accept failed", ["error": .string("\(error)")])
            return
        }
        let client: UVTCPHandle
        do {
            client = try UVTCPHandle(loop: loop)
        } catch {
            logger.error("cannot create an admin connection handle", ["error": .string("\(error)")])
            return
        }
        do {
            try listener.accept(into: client)
        } catch {
            logger.warning("admin accept failed", ["error": .string("\(error)")])
            client.close()
            return
        }
        guard !isClosed, connections.count < limits.maxConnections else {
            refusedConnections += 1
            logger.warning("admin connection refused: limit reached", ["limit": .int(Int64(limits.maxConnections))])
            client.close()
            return
        }
        client.setNoDelay(true)
        let connection = AdminConnection(server: self, handle: client)
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
    }
}

extension HTTPResponse {
    /// This answer with one more header line.
    public func with(header name: String, _ value: String) -> HTTPResponse {
        var copy = self
        copy.headers.append(.init(name: name, value: value))
        return copy
    }
}
