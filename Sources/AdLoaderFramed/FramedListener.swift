public import AdLoaderLogging
public import AdLoaderUV

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP or Unix socket whose accepted connections go to a ``ByteStreamAcceptor``: a
/// transport, or the daemon's protocol sniffer in front of several.
///
/// - Important: loop-confined. The listener owns its handle; ``close()`` closes it (and removes
///   the socket file of a Unix listener).
public final class FramedListener {
    /// The bound address (with the real port when port 0 was asked for).
    public private(set) var address: ListenAddress
    private let loop: UVLoop
    private let handle: UVStream
    private unowned let transport: any ByteStreamAcceptor
    private let logger: Logger
    private var isClosed = false

    /// Binds and listens on TCP `host:port`.
    /// - Throws: ``UVError`` naming the failing call (e.g. `uv_tcp_bind: EADDRINUSE`).
    public static func tcp(
        loop: UVLoop, host: String, port: Int, transport: any ByteStreamAcceptor, logger: Logger
    ) throws(UVError) -> FramedListener {
        let tcp = try UVTCPHandle(loop: loop)
        let listener = FramedListener(
            loop: loop, handle: tcp, address: .tcp(host: host, port: port), transport: transport, logger: logger)
        do {
            try tcp.bind(host: host, port: port)
            let bound = tcp.localAddress ?? (host, port)
            listener.address = .tcp(host: bound.host, port: bound.port)
            try listener.listen()
        } catch {
            listener.close()
            throw error
        }
        return listener
    }

    /// Binds and listens on the Unix socket `path`, created with permissions `mode`.
    /// - Throws: ``UVError`` (`EADDRINUSE` when a running server answers on `path`).
    public static func unix(
        loop: UVLoop, path: String, mode: UInt32, transport: any ByteStreamAcceptor, logger: Logger
    ) throws(UVError) -> FramedListener {
        let pipe = try UVPipeHandle(loop: loop)
        let listener = FramedListener(
            loop: loop, handle: pipe, address: .unix(path: path), transport: transport, logger: logger)
        do {
            try pipe.bind(path: path, mode: mode)
        } catch {
            // Nothing of ours at `path` to remove.
            listener.isClosed = true
            pipe.close()
            throw error
        }
        do {
            try listener.listen()
        } catch {
            listener.close()
            throw error
        }
        return listener
    }

    private init(
        loop: UVLoop, handle: UVStream, address: ListenAddress, transport: any ByteStreamAcceptor, logger: Logger
    ) {
        self.loop = loop
        self.handle = handle
        self.address = address
        self.transport = transport
        self.logger = logger
    }

    private func listen() throws(UVError) {
        try handle.listen { [unowned self] error in self.accept(error: error) }
    }

    /// Stops accepting; a Unix listener removes its socket file.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        handle.close()
        if case .unix(let path) = address { unlink(path) }
    }

    private func accept(error: UVError?) {
        if let error {
            logger.warning("accept failed", ["error": .string("\(error)")])
            return
        }
        let client: UVStream
        do {
            client = handle is UVTCPHandle ? try UVTCPHandle(loop: loop) : try UVPipeHandle(loop: loop)
        } catch {
            logger.error("cannot create a connection handle", ["error": .string("\(error)")])
            return
        }
        do {
            try handle.accept(into: client)
        } catch {
            logger.warning("accept failed", ["error": .string("\(error)")])
            client.close()
            return
        }
        let peer: String
        if let tcp = client as? UVTCPHandle {
            tcp.setNoDelay(true)
            peer = tcp.peerAddress.map { ListenAddress.tcp(host: $0.host, port: $0.port).description } ?? "tcp"
        } else {
            peer = "unix"
        }
        transport.accept(client, peer: peer)
    }
}
