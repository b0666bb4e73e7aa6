import AdLoaderCore
import AdLoaderLogging
import AdLoaderUV

/// Tells the framed protocol and gRPC (HTTP/2 with prior knowledge) apart on one listening
/// port by a connection's first bytes, and hands the connection — its first bytes included —
/// to the transport that speaks it.
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

    private let framed: any ByteStreamAcceptor
    private let http2: any ByteStreamAcceptor
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private let logger: Logger
    let timeout: Duration
    let maxPending: Int
    private var pending: [UInt64: Pending] = [:]
    private var nextID: UInt64 = 1

    /// - Parameters:
    ///   - framed, http2: where each kind of connection goes.
    ///   - timeout: how long a connection may take to send its first bytes.
    ///   - maxPending: connections being sniffed at once.
    public init(
        framed: any ByteStreamAcceptor, http2: any ByteStreamAcceptor, clock: any AdClock, scheduler: any AdScheduler,
        timeout: Duration, maxPending: Int, logger: Logger
    ) {
        self.framed = framed
        self.http2 = http2
        self.clock = clock
        self.scheduler = scheduler
        self.timeout = timeout
        self.maxPending = maxPending
        self.logger = logger
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
            self.handOver(connection, to: self.framed)
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
            let preface = Self.http2Preface
            let compared = min(connection.bytes.count, preface.count)
            if connection.bytes[..<compared].elementsEqual(preface[..<compared]) {
                if connection.bytes.count >= preface.count { handOver(connection, to: http2) }
                // Else: a prefix of the HTTP/2 preface so far; wait for more.
            } else {
                handOver(connection, to: framed)
            }
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
        if let reason { logger.info("connection closed", ["peer": .string(connection.peer), "reason": .string(reason)]) }
        connection.stream.close()
    }

    private func forget(_ connection: Pending) {
        pending[connection.id] = nil
        connection.timer?.cancel()
        connection.timer = nil
    }
}
