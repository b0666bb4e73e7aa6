public import AdLoaderCore
public import AdLoaderLogging
public import AdLoaderUV

/// Runs the TLS handshake of every connection a TCP listener accepts, then hands the
/// decrypted stream (a ``TLSByteStream``) to the next acceptor — the protocol sniffer, which
/// tells framed and gRPC apart on the plaintext as it does on cleartext connections.
///
/// A client that does not finish its handshake within the configured timeout is closed; one
/// whose handshake fails (garbage, a protocol below TLS 1.2, a client certificate the CA did
/// not sign, none when one is required) gets OpenSSL's alert and is closed. At most
/// ``maxPending`` handshakes run at once; more connections are closed at once.
///
/// The peer string handed on names a verified client certificate's subject after the address
/// (`10.0.0.7:50122 (CN=feed-renderer)`), so every log line of the transports names the caller.
///
/// - Important: loop-confined.
public final class TLSAcceptor: ByteStreamAcceptor {
    /// What handshakes have given so far (the daemon's metrics read them).
    public struct Counts: Sendable {
        public var completed: UInt64 = 0
        public var failed: UInt64 = 0
        public var timedOut: UInt64 = 0
        /// Completed handshakes by negotiated version ("TLSv1.3").
        public var byVersion: [String: UInt64] = [:]
        /// Completed handshakes with a verified client certificate, by subject; at most
        /// ``TLSAcceptor/maxCallerSeries`` subjects, the rest under `_other`.
        public var byCaller: [String: UInt64] = [:]
    }

    /// Distinct client subjects counted by name (bounds the metric's cardinality).
    public static let maxCallerSeries = 100

    /// The context new handshakes use; replace it to reload the certificate (open connections
    /// keep theirs).
    public var context: TLSContext
    private let next: any ByteStreamAcceptor
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private let logger: Logger
    public var handshakeTimeout: Duration
    public let maxPending: Int
    public private(set) var counts = Counts()
    private let buffers = TLSBuffers()
    private let deferral: SchedulerDeferral
    private var pending: [UInt64: (stream: TLSByteStream, timer: any ScheduledTask)] = [:]
    /// Failed handshakes are logged at most once per ``failureLogInterval`` (a scanner or a
    /// misconfigured fleet must not flood the log); the next line counts those not logged.
    public static let failureLogInterval: Duration = .seconds(1)
    private var lastFailureLogged: AdInstant?
    private var failuresNotLogged: UInt64 = 0
    private var nextID: UInt64 = 1

    /// - Parameters:
    ///   - next: where a connection goes once its handshake completed.
    ///   - maxPending: handshakes under way at once.
    public init(
        context: TLSContext, next: any ByteStreamAcceptor, clock: any AdClock, scheduler: any AdScheduler,
        handshakeTimeout: Duration, maxPending: Int, logger: Logger
    ) {
        self.context = context
        self.next = next
        self.clock = clock
        self.scheduler = scheduler
        self.handshakeTimeout = handshakeTimeout
        self.maxPending = maxPending
        self.logger = logger
        deferral = SchedulerDeferral(clock: clock, scheduler: scheduler)
    }

    /// Handshakes under way.
    public var pendingCount: Int { pending.count }

    public func accept(_ stream: any ByteStream, peer: String) {
        guard pending.count < maxPending else {
            logger.warning("connection refused: too many TLS handshakes under way", ["peer": .string(peer)])
            stream.close()
            return
        }
        guard let ssl = context.makeConnection() else {
            logger.error(
                "cannot start a TLS session", ["peer": .string(peer), "error": .string(TLSContext.takeError())])
            stream.close()
            return
        }
        let id = nextID
        nextID += 1
        guard let tls = TLSByteStream(base: stream, ssl: ssl, buffers: buffers, scheduler: deferral) else {
            logger.error("cannot start a TLS session", ["peer": .string(peer), "error": .string("out of memory")])
            stream.close()
            return
        }
        let timer = scheduler.schedule(at: clock.now + handshakeTimeout) { [weak self, weak tls] in
            guard let self, let tls, self.pending[id] != nil else { return }
            tls.abandonHandshake(
                reason: TLSHandshakeFailure(kind: .timeout, reason: "no handshake within \(self.handshakeTimeout)"))
        }
        pending[id] = (tls, timer)
        tls.startHandshake { [weak self, unowned tls] result in
            self?.handshakeEnded(id: id, tls, peer: peer, result)
        }
    }

    private func handshakeEnded(
        id: UInt64, _ tls: TLSByteStream, peer: String, _ result: Result<Void, TLSHandshakeFailure>
    ) {
        pending.removeValue(forKey: id)?.timer.cancel()
        switch result {
        case .failure(let failure):
            if failure.kind == .timeout { counts.timedOut += 1 } else { counts.failed += 1 }
            let now = clock.now
            if let last = lastFailureLogged, now - last < Self.failureLogInterval {
                failuresNotLogged += 1
                return
            }
            lastFailureLogged = now
            logger.info(
                "TLS handshake failed",
                [
                    "peer": .string(peer), "kind": .string(failure.kind.rawValue), "reason": .string(failure.reason),
                    "notLoggedSinceLast": .int(Int64(failuresNotLogged)),
                ])
            failuresNotLogged = 0
        case .success:
            counts.completed += 1
            counts.byVersion[tls.protocolVersion, default: 0] += 1
            var named = peer
            if let subject = tls.peerSubject {
                let key =
                    counts.byCaller[subject] != nil || counts.byCaller.count < Self.maxCallerSeries ? subject : "_other"
                counts.byCaller[key, default: 0] += 1
                named = "\(peer) (\(subject))"
            }
            logger.debug(
                "TLS connection",
                [
                    "peer": .string(named), "version": .string(tls.protocolVersion), "cipher": .string(tls.cipher),
                    "alpn": .string(tls.applicationProtocol ?? ""),
                ])
            next.accept(tls, peer: named)
        }
    }

    /// Closes every connection still in its handshake (at shutdown).
    public func closeAll() {
        for id in pending.keys.sorted() {
            guard let entry = pending.removeValue(forKey: id) else { continue }
            entry.timer.cancel()
            entry.stream.close()
        }
    }
}

/// ``TLSDeferral`` on the loop's scheduler: a one-shot timer due now (run after the current
/// callback, in the timers phase of the next iteration).
final class SchedulerDeferral: TLSDeferral {
    private let clock: any AdClock
    private let scheduler: any AdScheduler

    init(clock: any AdClock, scheduler: any AdScheduler) {
        self.clock = clock
        self.scheduler = scheduler
    }

    func `defer`(_ action: @escaping () -> Void) {
        _ = scheduler.schedule(at: clock.now, action)
    }
}
