import AdLoaderCore
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

/// One asynchronous connection to one Redis node, on the loop: hiredis' async API attached to
/// the loop by this class (a ``UVPoll`` on hiredis' socket for its read and write hooks, a
/// ``UVTimer`` for the reply timeout that hiredis 0.14 does not have), so no call ever
/// waits for Redis on the loop thread.
///
/// Outage: a failed connect, a closed connection, a reply later than `timeout` or a refused
/// `AUTH` fail every call in flight with the reason, drop the connection (hiredis frees its
/// context; its cleanup hook closes the poll), and start the retry interval: sends fail at
/// once, without touching the network, until `reconnectInterval` after the failed call's
/// `now`; the next send after it connects again.
///
/// Connecting: `redisAsyncConnect` resolves `host` with `getaddrinfo` on the calling thread:
/// give an IP address (a name is resolved on the loop at every reconnect).
///
/// - Important: loop-confined. The hiredis context, the poll and the timer are owned here
///   alone: the context's `ev.data` points at this object unretained, and ``close()`` (or a
///   failure) frees the context before this object can go away.
final class RedisConnection {
    let address: RedisAddress
    let loop: UVLoop
    let timeout: Duration
    let reconnectInterval: Duration
    let credentials: RedisCredentials?
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var poll: UVPoll?
    private let timer: UVTimer
    private var watched: UVPoll.Events = []
    /// Commands sent whose reply (or NULL reply) has not come yet.
    private(set) var pending = 0
    /// Why the current connection is being dropped; the message of the calls it fails.
    private var failure: String?
    private(set) var lastError = ""
    private var retryAt: AdInstant?
    private var lastNow = AdInstant(unixMilliseconds: 0)
    private var isClosed = false

    /// The reply handler of one command: hiredis keeps it (retained) as `privdata` until it
    /// calls back, exactly once, with a reply or NULL.
    private final class Callback {
        let completion: (Result<RedisReply, CapStoreError>) -> Void
        init(_ completion: @escaping (Result<RedisReply, CapStoreError>) -> Void) { self.completion = completion }
    }

    /// - Throws: ``UVError`` when the timer cannot be initialised.
    init(
        address: RedisAddress, loop: UVLoop, timeout: Duration, reconnectInterval: Duration,
        credentials: RedisCredentials?
    ) throws(UVError) {
        self.address = address
        self.loop = loop
        self.timeout = timeout
        self.reconnectInterval = reconnectInterval
        self.credentials = credentials
        timer = try UVTimer(loop: loop)
    }

    deinit { assert(context == nil, "RedisConnection released while connected: call close()") }

    var isConnected: Bool { context != nil && failure == nil }

    /// Whether a send now would fail at once (the retry interval after a failure runs).
    func isWaitingToRetry(now: AdInstant) -> Bool {
        context == nil && retryAt.map { now < $0 } == true
    }

    /// Sends one command (connecting first when needed); `completion` runs once, on the loop,
    /// with the reply (an error reply included) or the failure. It may run before `send`
    /// returns: when the retry interval runs or the connection cannot even start.
    func send(_ arguments: [String], now: AdInstant, completion: @escaping (Result<RedisReply, CapStoreError>) -> Void)
    {
        lastNow = now
        guard let context = connected(now: now) else {
            completion(.failure(CapStoreError("redis \(address): unavailable (\(lastError))")))
            return
        }
        let callback = Unmanaged.passRetained(Callback(completion))
        let status = command(context, arguments, callback.toOpaque())
        if status != REDIS_OK {
            callback.release()
            completion(.failure(CapStoreError("redis \(address): \(errorString(context) ?? "command refused")")))
            return
        }
        pending += 1
        if pending == 1 { timer.start(timeout: timeoutMilliseconds) { [unowned self] in self.timedOut() } }
    }

    /// Fails the calls in flight ("store closed"), frees the context, closes the handles.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        drop("store closed")
        timer.close()
    }

    // MARK: Connecting

    private var timeoutMilliseconds: UInt64 { UInt64(max(1, timeout.milliseconds)) }

    private func connected(now: AdInstant) -> UnsafeMutablePointer<redisAsyncContext>? {
        if isClosed {
            lastError = "store closed"
            return nil
        }
        if let context { return failure == nil ? context : nil }
        if let retryAt, now < retryAt { return nil }
        guard let ac = redisAsyncConnect(address.host, Int32(address.port)) else {
            startRetryInterval("out of memory")
            return nil
        }
        if ac.pointee.err != 0 {
            let message = errorString(ac) ?? "connect failed"
            redisAsyncFree(ac)
            startRetryInterval(message)
            return nil
        }
        let poll: UVPoll
        do {
            poll = try UVPoll(loop: loop, fileDescriptor: ac.pointee.c.fd)
        } catch {
            redisAsyncFree(ac)
            startRetryInterval("\(error)")
            return nil
        }
        self.poll = poll
        watched = []
        failure = nil
        retryAt = nil
        context = ac
        attach(ac)
        if let credentials {
            let callback = Unmanaged.passRetained(Callback { [unowned self] result in self.authenticated(result) })
            if command(ac, credentials.arguments, callback.toOpaque()) != REDIS_OK {
                callback.release()
            } else {
                pending += 1
                timer.start(timeout: timeoutMilliseconds) { [unowned self] in self.timedOut() }
            }
        }
        return ac
    }

    private func authenticated(_ result: Result<RedisReply, CapStoreError>) {
        guard case .success(let reply) = result, let message = reply.errorMessage else { return }
        drop("AUTH refused: \(message)")
    }

    /// hiredis' event hooks, pointed at this connection (unretained: the context never
    /// outlives it).
    private func attach(_ ac: UnsafeMutablePointer<redisAsyncContext>) {
        ac.pointee.ev.data = Unmanaged.passUnretained(self).toOpaque()
        ac.pointee.ev.addRead = { RedisConnection.from($0)?.watch(.readable, true) }
        ac.pointee.ev.delRead = { RedisConnection.from($0)?.watch(.readable, false) }
        ac.pointee.ev.addWrite = { RedisConnection.from($0)?.watch(.writable, true) }
        ac.pointee.ev.delWrite = { RedisConnection.from($0)?.watch(.writable, false) }
        ac.pointee.ev.cleanup = { RedisConnection.from($0)?.cleanedUp() }
    }

    private static func from(_ privdata: UnsafeMutableRawPointer?) -> RedisConnection? {
        guard let privdata else { return nil }
        return Unmanaged<RedisConnection>.fromOpaque(privdata).takeUnretainedValue()
    }

    private func watch(_ events: UVPoll.Events, _ on: Bool) {
        let wanted = on ? watched.union(events) : watched.subtracting(events)
        guard wanted != watched, let poll else { return }
        watched = wanted
        if wanted.isEmpty {
            poll.stop()
            return
        }
        do {
            try poll.start(wanted) { [unowned self] result in self.polled(result) }
        } catch {
            drop("\(error)")
        }
    }

    private func polled(_ result: Result<UVPoll.Events, UVError>) {
        guard let ac = context else { return }
        switch result {
        case .failure(let error): drop("\(error)")
        case .success(let events):
            if !events.isDisjoint(with: [.readable, .disconnect]) { redisAsyncHandleRead(ac) }
            // The read may have freed the context (a closed connection): look again.
            if events.contains(.writable), let ac = context { redisAsyncHandleWrite(ac) }
        }
    }

    /// hiredis frees the context (after a failure, or ours): the poll goes with it.
    private func cleanedUp() {
        context = nil
        watched = []
        poll?.close()
        poll = nil
        if failure == nil { noteFailure("connection closed") }
    }

    // MARK: Replies and failures

    private func replied(
        _ callback: Callback, _ reply: UnsafeMutableRawPointer?, _ ac: UnsafeMutablePointer<redisAsyncContext>?
    ) {
        pending -= 1
        if pending > 0 && failure == nil {
            timer.start(timeout: timeoutMilliseconds) { [unowned self] in self.timedOut() }
        } else if pending == 0 {
            timer.stop()
        }
        if let value = RedisReply(reply?.assumingMemoryBound(to: redisReply.self)) {
            callback.completion(.success(value))
            return
        }
        // NULL: hiredis is freeing the context and fails what was in flight.
        if failure == nil { noteFailure(ac.flatMap(errorString) ?? "connection closed") }
        callback.completion(.failure(CapStoreError("redis \(address): \(failure ?? lastError)")))
    }

    private func timedOut() {
        drop("no reply within \(timeout)")
    }

    /// Records why the connection ends and starts the retry interval.
    private func noteFailure(_ message: String) {
        failure = message
        startRetryInterval(message)
    }

    private func startRetryInterval(_ message: String) {
        lastError = message
        retryAt = lastNow + reconnectInterval
    }

    /// Ends the connection: every call in flight fails with `message` (hiredis calls each
    /// back with NULL, at once or, inside a reply callback, when it returns).
    private func drop(_ message: String) {
        timer.stop()
        guard let ac = context else { return }
        if failure != nil { return }
        noteFailure(message)
        redisAsyncFree(ac)
    }

    private func command(
        _ ac: UnsafeMutablePointer<redisAsyncContext>, _ arguments: [String], _ privdata: UnsafeMutableRawPointer
    ) -> Int32 {
        var lengths = arguments.map { $0.utf8.count }
        let cStrings = arguments.map { copyBytes($0) }
        defer { cStrings.forEach { free($0) } }
        var argv: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        return argv.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeMutableBufferPointer { lengths in
                redisAsyncCommandArgv(
                    ac,
                    { ac, reply, privdata in
                        guard let privdata else { return }
                        let callback = Unmanaged<Callback>.fromOpaque(privdata).takeRetainedValue()
                        guard let owner = ac.flatMap({ RedisConnection.from($0.pointee.ev.data) }) else {
                            callback.completion(.failure(CapStoreError("redis: connection gone")))
                            return
                        }
                        owner.replied(callback, reply, ac)
                    }, privdata, Int32(arguments.count), argv.baseAddress, lengths.baseAddress)
            }
        }
    }

    private func errorString(_ ac: UnsafeMutablePointer<redisAsyncContext>) -> String? {
        guard ac.pointee.err != 0 else { return nil }
        return withUnsafeBytes(of: ac.pointee.c.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

/// A malloc'ed copy of `text`'s UTF-8 bytes (NULs included: hiredis takes lengths).
private func copyBytes(_ text: String) -> UnsafeMutablePointer<CChar> {
    let count = text.utf8.count
    guard let raw = malloc(max(1, count)) else { fatalError("out of memory") }
    let bytes = raw.bindMemory(to: CChar.self, capacity: max(1, count))
    var text = text
    text.withUTF8 { utf8 in
        if let base = utf8.baseAddress { UnsafeMutableRawPointer(bytes).copyMemory(from: base, byteCount: count) }
    }
    return bytes
}
