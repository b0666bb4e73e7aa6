public import AdLoaderLogging
public import AdLoaderTime
public import AdLoaderUV

/// Tells protocols apart on one listening port by a connection's first bytes — a list of
/// routes, each a preface and its transport (today gRPC's HTTP/2 preface; the framed
/// protocol is the fallback) — and hands the connection, its first bytes included, to the
/// transport that speaks it.
///
/// A connection whose bytes so far are a prefix of the HTTP/2 client preface
/// (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, 24 bytes) is held until they complete it (HTTP/2) or
/// stop matching it (framed). Anything else — the framed preface `ADLOADER/1\r\n` starts with
/// `A` — goes to the framed transport at its first byte, which then answers garbage as it
/// always has. A connection that sends nothing (or only part of the HTTP/2 preface) for
/// ``timeout`` goes to the framed transport too, whose own preface timeout then answers it
/// DEADLINE_EXCEEDED and closes it. The sniffer holds at most ``maxPending`` connections at
/// once (the rest are closed at once).
///
/// - Important: loop-confined.
public final class ProtocolSniffer: ByteStreamAcceptor {
    /// The HTTP/2 connection preface a client sends first (RFC 9113, 3.4).
    public static let http2Preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private final class Pending {
        let id: UInt64
        let stream: any ByteStream
        let peer: String
        var bytes: [UInt8] = []
        var timer: (any ScheduledTask)?

        init(id: UInt64, stream: any ByteStream, peer: String) {
            self.id = id
            self.stream = stream
            self.peer = peer
        }
    }

    /// A protocol recognised by its client's first bytes.
    public struct Route {
        /// The bytes a client of this protocol sends first.
        public let preface: [UInt8]
        public let acceptor: any ByteStreamAcceptor

        public init(preface: [UInt8], acceptor: any ByteStreamAcceptor) {
            precondition(!preface.isEmpty, "a route needs a preface")
            self.preface = preface
            self.acceptor = acceptor
        }
    }

    private let routes: [Route]
    /// Where a connection matching no route goes (the framed transport, which answers garbage
    /// and silence in its own protocol).
    private let fallback: any ByteStreamAcceptor
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private let logger: Logger
    let timeout: Duration
    let maxPending: Int
    private var pending: [UInt64: Pending] = [:]
    private var nextID: UInt64 = 1

    /// - Parameters:
    ///   - routes: the protocols told apart by their preface, in order; a connection goes to
    ///     the first whose preface it sent.
    ///   - fallback: where a connection matching none goes.
    ///   - timeout: how long a connection may take to send its first bytes.
    ///   - maxPending: connections being sniffed at once.
    public init(
        routes: [Route], fallback: any ByteStreamAcceptor, clock: any AdClock, scheduler: any AdScheduler,
        timeout: Duration, maxPending: Int, logger: Logger
    ) {
        self.routes = routes
        self.fallback = fallback
        self.clock = clock
        self.scheduler = scheduler
        self.timeout = timeout
        self.maxPending = maxPending
        self.logger = logger
    }

    /// The framed protocol and gRPC (HTTP/2 with prior knowledge) on one port.
    public convenience init(
        framed: any ByteStreamAcceptor, http2: any ByteStreamAcceptor, clock: any AdClock, scheduler: any AdScheduler,
        timeout: Duration, maxPending: Int, logger: Logger
    ) {
        self.init(
            routes: [Route(preface: Self.http2Preface, acceptor: http2)], fallback: framed, clock: clock,
            scheduler: scheduler, timeout: timeout, maxPending: maxPending, logger: logger)
    }

    /// Connections whose protocol is not known yet.
    public var pendingCount: Int { pending.count }

    public func accept(_ stream: any ByteStream, peer: String) {
        guard pending.count < maxPending else {
            logger.warning("connection refused: too many connections sending nothing yet", ["peer": .string(peer)])
            stream.close()
            return
        }
        let connection = Pending(id: nextID, stream: stream, peer: peer)
        nextID += 1
        pending[connection.id] = connection
        do {
            try stream.readStart { [weak self, weak connection] result in
                guard let self, let connection else { return }
                self.didRead(connection, result)
            }
        } catch {
            drop(connection, reason: "cannot read: \(error)")
            return
        }
        connection.timer = scheduler.schedule(at: clock.now + timeout) { [weak self, weak connection] in
            guard let self, let connection, self.pending[connection.id] != nil else { return }
            // The framed transport answers silence in its own protocol (after its own preface
            // timeout), as it did before the sniffer: a client of an older version reads why.
            self.handOver(connection, to: self.fallback)
        }
    }

    /// Closes every connection still being sniffed (at shutdown).
    public func closeAll() {
        for id in pending.keys.sorted() {
            if let connection = pending[id] { drop(connection, reason: nil) }
        }
    }

    private func didRead(_ connection: Pending, _ result: Result<UnsafeRawBufferPointer, UVError>) {
        guard pending[connection.id] != nil else { return }
        switch result {
        case .failure(let error):
            // Closed before saying anything: nothing to answer.
            drop(connection, reason: error.isEndOfFile ? nil : "read failed: \(error)")
        case .success(let bytes):
            connection.bytes.append(contentsOf: bytes)
            var mayStillMatch = false
            for route in routes {
                let preface = route.preface
                let compared = min(connection.bytes.count, preface.count)
                guard connection.bytes[..<compared].elementsEqual(preface[..<compared]) else { continue }
                if connection.bytes.count >= preface.count {
                    handOver(connection, to: route.acceptor)
                    return
                }
                // A prefix of this preface so far; wait for more.
                mayStillMatch = true
            }
            if !mayStillMatch { handOver(connection, to: fallback) }
        }
    }

    private func handOver(_ connection: Pending, to acceptor: any ByteStreamAcceptor) {
        forget(connection)
        connection.stream.readStop()
        acceptor.accept(PrefixedByteStream(connection.stream, prefix: connection.bytes), peer: connection.peer)
    }

    private func drop(_ connection: Pending, reason: String?) {
        guard pending[connection.id] != nil else { return }
        forget(connection)
        if let reason {
            logger.info("connection closed", ["peer": .string(connection.peer), "reason": .string(reason)])
        }
        connection.stream.close()
    }

    private func forget(_ connection: Pending) {
        pending[connection.id] = nil
        connection.timer?.cancel()
        connection.timer = nil
    }
}
