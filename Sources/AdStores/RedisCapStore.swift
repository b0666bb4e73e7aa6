import AdLoaderCore
internal import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// A ``CapStore`` in Redis, for several daemons serving one fleet: every instance reads and
/// moves the same counts.
///
/// Keys (components length-prefixed, so no id can forge another's key):
/// - `<prefix>:<n>:<loader>:<n>:<device>:d:<YYYY-MM-DD>`: the device's confirmed shows on
///   that local day, an integer moved with `INCR`, expiring two days after the day ends at
///   the device's offset (`PEXPIRE`);
/// - `<prefix>:<n>:<loader>:<n>:<device>:s:<n>:<session>`: a hash `count`, `last` (ms),
///   expiring `sessionTimeout` after the session's last activity.
/// Each call is one `EVAL` of a short script (one round trip, atomic across instances).
///
/// Outage: a failed connect or command fails the call with ``CapStoreError`` (the service
/// then refuses or allows shows, as configured), drops the connection, and tries to
/// reconnect on the first call after `reconnectInterval`: calls in between fail at once
/// without touching the network, so an outage costs at most one `timeout` per interval on
/// the loop. Recovery needs nothing but Redis answering again.
///
/// Calls are synchronous (hiredis' blocking API with `timeout` on connect and every reply):
/// a loopback round trip is tens of microseconds (BENCHMARKS.md).
///
/// - Important: loop-confined: one thread uses one store.
public final class RedisCapStore: CapStore {
    public let host: String
    public let port: Int
    public let keyPrefix: String
    public let timeout: Duration
    public let reconnectInterval: Duration
    private var context: UnsafeMutablePointer<redisContext>?
    private var retryAt: AdInstant?
    private var lastError = ""
    private var isClosed = false

    static let script = """
        local s = 0
        local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
        if tonumber(ARGV[1]) - last < tonumber(ARGV[2]) then
          s = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
        end
        local d
        if ARGV[4] == '1' then
          s = s + 1
          d = redis.call('INCR', KEYS[2])
          redis.call('PEXPIRE', KEYS[2], ARGV[3])
        else
          d = tonumber(redis.call('GET', KEYS[2]) or '0')
        end
        redis.call('HSET', KEYS[1], 'count', s, 'last', ARGV[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return {s, d}
        """

    /// Connects lazily (the first call connects).
    /// - Parameters:
    ///   - keyPrefix: the first component of every key, e.g. "adloader:appopen".
    ///   - timeout: for the connect and for every reply.
    ///   - reconnectInterval: after a failure, calls fail at once for this long.
    public init(
        host: String, port: Int, keyPrefix: String = "adloader:appopen", timeout: Duration = .milliseconds(200),
        reconnectInterval: Duration = .seconds(1)
    ) {
        self.host = host
        self.port = port
        self.keyPrefix = keyPrefix
        self.timeout = timeout
        self.reconnectInterval = reconnectInterval
    }

    deinit { close() }

    public func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        completion(run(key, now: now, sessionTimeout: sessionTimeout, increment: false))
    }

    public func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        completion(run(key, now: now, sessionTimeout: sessionTimeout, increment: true))
    }

    public func close() {
        isClosed = true
        disconnect()
    }

    /// Whether a connection is open now (false during an outage's retry interval).
    public var isConnected: Bool { context != nil }

    // MARK: Keys

    func deviceKey(_ key: CapKey) -> String {
        "\(keyPrefix):\(key.loader.utf8.count):\(key.loader):\(key.deviceID.utf8.count):\(key.deviceID)"
    }

    func dayKey(_ key: CapKey) -> String { "\(deviceKey(key)):d:\(key.day)" }

    func sessionKey(_ key: CapKey) -> String { "\(deviceKey(key)):s:\(key.sessionID.utf8.count):\(key.sessionID)" }

    // MARK: Calls

    private func run(
        _ key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool
    ) -> Result<AppOpenCounts, CapStoreError> {
        if isClosed { return .failure(CapStoreError("redis \(host):\(port): store closed")) }
        guard let context = connected(now: now) else {
            return .failure(CapStoreError("redis \(host):\(port): unavailable (\(lastError))"))
        }
        // The day's count lives until two days after the day ended at the device's offset:
        // long enough for any other offset the device may switch to.
        let dayTTL = max(1_000, (key.day.end(utcOffsetSeconds: key.utcOffsetSeconds) - now).milliseconds + 2 * 86_400_000)
        let arguments = [
            "EVAL", Self.script, "2", sessionKey(key), dayKey(key), String(now.unixMilliseconds),
            String(max(1, sessionTimeout.milliseconds)), String(dayTTL), increment ? "1" : "0",
        ]
        guard let reply = command(context, arguments) else {
            fail(now: now, context.pointee.err != 0 ? errorString(context) : "no reply")
            return .failure(CapStoreError("redis \(host):\(port): \(lastError)"))
        }
        defer { freeReplyObject(reply) }
        let r = reply.pointee
        guard r.type == REDIS_REPLY_ARRAY, r.elements == 2, let elements = r.element,
            let s = elements[0], let d = elements[1], s.pointee.type == REDIS_REPLY_INTEGER,
            d.pointee.type == REDIS_REPLY_INTEGER
        else {
            let message = r.type == REDIS_REPLY_ERROR && r.str != nil ? String(cString: r.str) : "unexpected reply type \(r.type)"
            return .failure(CapStoreError("redis \(host):\(port): \(message)"))
        }
        return .success(AppOpenCounts(session: Int(s.pointee.integer), day: Int(d.pointee.integer)))
    }

    /// The open connection, or a new one unless the retry interval after a failure is running.
    private func connected(now: AdInstant) -> UnsafeMutablePointer<redisContext>? {
        if let context { return context }
        if let retryAt, now < retryAt { return nil }
        let tv = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.milliseconds % 1_000) * 1_000)
        guard let c = redisConnectWithTimeout(host, Int32(port), tv) else {
            fail(now: now, "out of memory")
            return nil
        }
        if c.pointee.err != 0 {
            let message = errorString(c)
            redisFree(c)
            fail(now: now, message)
            return nil
        }
        redisSetTimeout(c, tv)
        context = c
        retryAt = nil
        return c
    }

    private func command(_ context: UnsafeMutablePointer<redisContext>, _ arguments: [String]) -> UnsafeMutablePointer<redisReply>? {
        let cStrings = arguments.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let lengths = arguments.map { $0.utf8.count }
        var argv: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        let raw: UnsafeMutableRawPointer? = argv.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { lengths in
                redisCommandArgv(context, Int32(arguments.count), argv.baseAddress, lengths.baseAddress)
            }
        }
        return raw?.assumingMemoryBound(to: redisReply.self)
    }

    private func fail(now: AdInstant, _ message: String) {
        lastError = message
        disconnect()
        retryAt = now + reconnectInterval
    }

    private func disconnect() {
        if let context { redisFree(context) }
        context = nil
    }

    private func errorString(_ c: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: c.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
