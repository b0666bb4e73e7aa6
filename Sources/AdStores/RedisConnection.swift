import AdLoaderCore
import AdLoaderTLS
import AdLoaderUV
internal import CHiredis

#if canImport(Glibc)
    import Glibc
#endif

/// What a connection authenticates with right after connecting: `AUTH password` (the
/// `requirepass` user) or `AUTH user password` (an ACL user, Redis 6+).
public struct RedisCredentials: Hashable, Sendable {
    /// Nil or empty: the default user.
    public var user: String?
    public var password: String

    public init(user: String? = nil, password: String) {
        self.user = user
        self.password = password
    }

    var arguments: [String] {
        if let user, !user.isEmpty { return ["AUTH", user, password] }
        return ["AUTH", password]
    }
}

/// One asynchronous connection to one Redis node, on the loop: a libuv TCP handle
/// (``UVTCPHandle``), optionally TLS over it (``TLSClientContext``: OpenSSL on memory BIOs, the
/// handshake driven by the loop's reads), commands encoded here (RESP: an array of bulk
/// strings) and replies parsed by hiredis' reader (`redisReaderFeed`/`redisReaderGetReply`).
/// hiredis is only the codec: its own I/O (0.14 has no TLS and no reply timeout) is not used,
/// so plaintext and TLS take one path and no call ever waits for Redis on the loop thread.
///
/// Outage: a failed connect, a failed TLS handshake, a closed connection, a reply later than
/// `timeout`, a reply the reader cannot parse or a refused `AUTH` fail every call in flight
/// with the reason, close the connection, and start the retry interval: sends fail at once,
/// without touching the network, until `reconnectInterval` after the failed call's `now`; the
/// next send after it connects again. The timeout runs from the first command sent to a
/// connection with none in flight (the connect and the handshake included) and restarts at
/// each reply; when it expires with bytes from the server not yet read (the loop stalled
/// longer than the timeout, and runs timers before reads), it runs once more instead, so an
/// answered call is not failed for the loop's own delay.
///
/// Commands sent while the connection is being made wait in memory and go out, in order,
/// once it is open (after `AUTH`, which is queued first).
///
/// Connecting: an IP address connects at once; a name is resolved at every connect by
/// ``UVNameResolution`` (`uv_getaddrinfo` on libuv's thread pool, never on the loop), its first
/// address used; the reply timeout covers the lookup too, and TLS checks the certificate
/// against the name as configured.
///
/// - Important: loop-confined. The TCP handle, the TLS stream and the timer are owned here
///   alone and closed through their close callbacks; ``close()`` before releasing.
final class RedisConnection {
    typealias Completion = (Result<RedisReply, CapStoreError>) -> Void

    let address: RedisAddress
    let loop: UVLoop
    let timeout: Duration
    let reconnectInterval: Duration
    let credentials: RedisCredentials?
    /// TLS to the node; nil: plaintext.
    let tls: TLSClientContext?
    private var link: Link?
    private let timer: UVTimer
    /// Why the last connection ended (or could not start); the message of fast failures.
    private(set) var lastError = ""
    private var retryAt: AdInstant?
    private var lastNow = AdInstant(unixMilliseconds: 0)
    private var isClosed = false

    /// One connection, from its connect to its end: the handles, the reader, the commands
    /// waiting for the stream to open, and the completions of the commands sent, in order.
    private final class Link {
        let tcp: UVTCPHandle
        /// The name's lookup while it runs (a host that is not an IP literal).
        var resolution: UVNameResolution?
        var tls: TLSByteStream?
        /// Where commands are written: nil until connected (and the handshake done).
        var stream: (any ByteStream)?
        let reader: UnsafeMutablePointer<redisReader>
        var unsent: [UInt8] = []
        /// The first write that failed: nothing more is written, and the read side ends the
        /// link with its reason (a TLS alert the peer sent before it closed is still to be read).
        var writeError: UVError?
        /// The reply timer fired while the reply's bytes were already waiting to be read (after a
        /// loop stall: the loop runs timers before it reads) and was given one more period; a
        /// reply clears it, so a trickle of bytes cannot put the timeout off for ever.
        var timeoutDeferred = false
        /// Completions of the commands in flight, oldest at `head`.
        var waiting: [Completion?] = []
        var head = 0

        init(tcp: UVTCPHandle, reader: UnsafeMutablePointer<redisReader>) {
            self.tcp = tcp
            self.reader = reader
        }

        deinit { redisReaderFree(reader) }

        var inFlight: Int { waiting.count - head }

        func takeOldest() -> Completion? {
            guard head < waiting.count else { return nil }
            let completion = waiting[head]
            waiting[head] = nil
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1_024 && head * 2 >= waiting.count {
                // Under steady pipelining the queue may never run empty: drop the answered slots.
                waiting.removeFirst(head)
                head = 0
            }
            return completion
        }
    }

    /// - Throws: ``UVError`` when the timer cannot be initialised.
    init(
        address: RedisAddress, loop: UVLoop, timeout: Duration, reconnectInterval: Duration,
        credentials: RedisCredentials?, tls: TLSClientContext? = nil
    ) throws(UVError) {
        self.address = address
        self.loop = loop
        self.timeout = timeout
        self.reconnectInterval = reconnectInterval
        self.credentials = credentials
        self.tls = tls
        timer = try UVTimer(loop: loop)
    }

    deinit { assert(link == nil, "RedisConnection released while connected: call close()") }

    /// A connection is open or being made.
    var isConnected: Bool { link != nil }

    /// Commands sent whose reply has not come yet.
    var pending: Int { link?.inFlight ?? 0 }

    /// Whether a send now would fail at once (the retry interval after a failure runs).
    func isWaitingToRetry(now: AdInstant) -> Bool {
        link == nil && retryAt.map { now < $0 } == true
    }

    /// Sends one command (connecting first when needed); `completion` runs once, on the loop,
    /// with the reply (an error reply included) or the failure. It may run before `send`
    /// returns: when the retry interval runs or the connection cannot even start.
    func send(_ arguments: [String], now: AdInstant, completion: @escaping Completion) {
        send(bytes: arguments.map { Array($0.utf8) }, now: now, completion: completion)
    }

    /// ``send(_:now:completion:)`` with binary-safe arguments.
    func send(bytes arguments: [[UInt8]], now: AdInstant, completion: @escaping Completion) {
        lastNow = now
        guard let link = connected(now: now) else {
            completion(.failure(CapStoreError("redis \(address): unavailable (\(lastError))")))
            return
        }
        enqueue(Self.encode(arguments), on: link, completion)
    }

    /// Fails the calls in flight ("store closed"), closes the handles.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        drop("store closed")
        timer.close()
    }

    /// RESP: `*<count>\r\n` then `$<length>\r\n<bytes>\r\n` per argument.
    static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(arguments.reduce(16) { $0 + $1.count + 16 })
        bytes += Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.count)\r\n".utf8)
            bytes += argument
            bytes += [13, 10]
        }
        return bytes
    }

    // MARK: Connecting

    private var timeoutMilliseconds: UInt64 { UInt64(max(1, timeout.milliseconds)) }

    private func connected(now: AdInstant) -> Link? {
        if isClosed {
            lastError = "store closed"
            return nil
        }
        if let link { return link }
        if let retryAt, now < retryAt { return nil }
        let tcp: UVTCPHandle
        do {
            tcp = try UVTCPHandle(loop: loop)
        } catch {
            startRetryInterval("\(error)")
            return nil
        }
        guard let reader = redisReaderCreate() else {
            tcp.close()
            startRetryInterval("out of memory")
            return nil
        }
        let link = Link(tcp: tcp, reader: reader)
        do {
            if UVTCPHandle.isIPAddress(address.host) {
                try connect(link, to: address.host)
            } else {
                link.resolution = try UVNameResolution.start(on: loop, host: address.host) {
                    [weak self, weak link] result in
                    guard let self, let link, link === self.link else { return }
                    link.resolution = nil
                    switch result {
                    case .success(let ip):
                        do { try self.connect(link, to: ip) } catch { self.drop("cannot connect: \(error)") }
                    case .failure(let error):
                        self.drop("cannot resolve \(self.address.host): \(error.name)")
                    }
                }
            }
        } catch {
            tcp.close()
            startRetryInterval("cannot connect: \(error)")
            return nil
        }
        retryAt = nil
        self.link = link
        if let credentials {
            enqueue(Self.encode(credentials.arguments.map { Array($0.utf8) }), on: link) { [weak self] result in
                self?.authenticated(result)
            }
        }
        return link
    }

    /// Starts the TCP connect of `link` to `ip`, an IP literal.
    private func connect(_ link: Link, to ip: String) throws(UVError) {
        try link.tcp.connect(host: ip, port: address.port) { [weak self, weak link] error in
            guard let self, let link, link === self.link else { return }
            self.tcpConnected(link, error)
        }
    }

    private func tcpConnected(_ link: Link, _ error: UVError?) {
        if let error {
            drop(UVError(code: error.code, operation: "cannot connect").description)
            return
        }
        link.tcp.setNoDelay(true)
        guard let tls else {
            opened(link, link.tcp)
            return
        }
        do {
            link.tls = try tls.connect(over: link.tcp, host: address.host, port: address.port, loop: loop) {
                [weak self, weak link] result in
                guard let self, let link, link === self.link else { return }
                switch result {
                case .success:
                    if let stream = link.tls { self.opened(link, stream) }
                case .failure(let failure):
                    self.drop("TLS handshake failed: \(failure.reason)")
                }
            }
        } catch {
            drop("TLS: \(error.reason)")
        }
    }

    /// Connected (and the handshake done): reads start, the commands sent meanwhile go out.
    private func opened(_ link: Link, _ stream: any ByteStream) {
        link.stream = stream
        do {
            try stream.readStart { [weak self, weak link] result in
                guard let self, let link, link === self.link else { return }
                self.received(result, on: link)
            }
        } catch {
            drop("\(error)")
            return
        }
        let unsent = link.unsent
        link.unsent = []
        if !unsent.isEmpty { write(unsent, on: link, stream) }
    }

    private func authenticated(_ result: Result<RedisReply, CapStoreError>) {
        guard case .success(let reply) = result, let message = reply.errorMessage else { return }
        drop("AUTH refused: \(message)")
    }

    // MARK: Commands and replies

    private func enqueue(_ command: [UInt8], on link: Link, _ completion: @escaping Completion) {
        link.waiting.append(completion)
        if link.inFlight == 1 { startTimer() }
        if let stream = link.stream {
            write(command, on: link, stream)
        } else {
            link.unsent += command
        }
    }

    /// Writes `bytes` (what the socket does not take now is queued). A failed write does not
    /// end the link here: the socket's error or end reaches the read side, which ends it with
    /// the peer's reason (a TLS alert before the peer closed, "connection closed"), or the
    /// reply timer does.
    private func write(_ bytes: [UInt8], on link: Link, _ stream: any ByteStream) {
        guard link.writeError == nil else { return }
        let error = bytes.withUnsafeBytes { buffer in
            stream.writeNowOrQueue(buffer) {
                { [weak link] error in
                    guard let link, let error, !error.isCancelled, link.writeError == nil else { return }
                    link.writeError = error
                }
            }
        }
        if let error { link.writeError = error }
    }

    private func received(_ result: Result<UnsafeRawBufferPointer, UVError>, on link: Link) {
        let bytes: UnsafeRawBufferPointer
        switch result {
        case .failure(let error):
            if error.code == UVError.protocolErrorCode {
                drop(error.operation)  // "TLS: <OpenSSL's reason>" (an alert from the server)
            } else if error.isEndOfFile {
                drop(link.writeError.map { "connection closed (\($0))" } ?? "connection closed")
            } else {
                drop("\(error)")
            }
            return
        case .success(let read): bytes = read
        }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // The reader copies the bytes: the chunk is consumed before any completion runs.
        guard redisReaderFeed(link.reader, base.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK else {
            drop(Self.readerError(link.reader))
            return
        }
        // A completion may send, close or drop: each reply is taken only while this link is current.
        while link === self.link {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(link.reader, &raw) == REDIS_OK else {
                drop(Self.readerError(link.reader))
                return
            }
            guard let raw else { return }
            let reply = RedisReply(raw.assumingMemoryBound(to: redisReply.self)) ?? .null
            freeReplyObject(raw)
            guard let completion = link.takeOldest() else {
                drop("a reply no command asked for: \(reply)")
                return
            }
            link.timeoutDeferred = false
            if link.inFlight > 0 { startTimer() } else { timer.stop() }
            completion(.success(reply))
        }
    }

    private static func readerError(_ reader: UnsafeMutablePointer<redisReader>) -> String {
        withUnsafeBytes(of: reader.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private func startTimer() {
        timer.start(timeout: timeoutMilliseconds) { [unowned self] in self.timedOut() }
    }

    private func timedOut() {
        if let link, !link.timeoutDeferred, link.stream?.hasUnreadInput == true {
            // The reply may be in those bytes: read them (this loop pass) before giving up.
            link.timeoutDeferred = true
            startTimer()
            return
        }
        drop("no reply within \(timeout)")
    }

    /// Reply bytes wait in the socket, not yet read (for the tests of a stalled loop).
    var hasUnreadReply: Bool { link?.stream?.hasUnreadInput ?? false }

    private func startRetryInterval(_ message: String) {
        lastError = message
        retryAt = lastNow + reconnectInterval
    }

    /// Ends the connection: the handles close (a TLS session sends close_notify first), the
    /// retry interval starts, and every call in flight fails with `message`, oldest first.
    private func drop(_ message: String) {
        timer.stop()
        guard let link else { return }
        self.link = nil
        startRetryInterval(message)
        link.resolution?.cancel()
        link.tls?.close()
        link.tcp.close()
        let error = CapStoreError("redis \(address): \(message)")
        while let completion = link.takeOldest() { completion(.failure(error)) }
    }
}
