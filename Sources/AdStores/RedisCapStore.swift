public import AdLoaderCore
public import AdLoaderTLS
public import AdLoaderUV

/// A ``CapStore`` in Redis, for several daemons serving one fleet: every instance reads and
/// moves the same counts. Runs on the loop, asynchronously: a call sends its command and
/// returns; the completion runs when the reply arrives (a libuv TCP handle, optionally TLS,
/// hiredis' reader: ``RedisConnection``), so a slow or absent Redis never pauses the loop.
///
/// Keys (components length-prefixed, so no id can forge another's key; the device's part in
/// a hash tag `{...}`, so that one device's keys share a Redis Cluster slot):
/// - `<prefix>:{<n>:<loader>:<n>:<device>}:d:<YYYY-MM-DD>`: the device's confirmed shows on
///   that local day, an integer moved with `INCR`, expiring two days after the day ends at
///   the device's offset (`PEXPIRE`);
/// - `<prefix>:{<n>:<loader>:<n>:<device>}:s:<n>:<session>`: a hash `count`, `last` (ms),
///   expiring `sessionTimeout` after the session's last activity.
/// (Redis takes the tag up to the first `}`: a device id containing `}` shortens the tag for
/// both keys alike, so they still share a slot.)
///
/// Each call is one `EVALSHA` of a short script (one round trip, atomic across instances);
/// a `NOSCRIPT` answer (a restarted or failed-over node, `SCRIPT FLUSH`) is retried once as
/// `EVAL`, which caches the script again.
///
/// Redis Cluster (`cluster`): the store reads the slot map with `CLUSTER SLOTS` from the seed
/// (or any node it knows), sends each call to the master of its device's slot, follows
/// `MOVED` (updating the map, and reading it again) and `ASK` (`ASKING` first), at most 5
/// redirections per call, and reads the map again after a node failed (at most one read per
/// 100 ms; one asked for sooner starts with the first call after the 100 ms, so a map left
/// partly stale by a failover does not stay so). hiredis 0.14 has no
/// cluster client; this is that client, for the one command this store sends.
///
/// Outage: a failed connect, a closed connection, a reply later than `timeout` fail the call
/// with ``CapStoreError`` (the service then refuses or allows shows, as configured), drop that
/// node's connection, and calls to it fail at once, without touching the network, until
/// `reconnectInterval` has passed; the next call reconnects. Recovery needs nothing but Redis
/// answering again. The loop never waits: the timeout is a timer.
///
/// TLS (`tls`): every node's connection runs TLS 1.2 or later (``TLSClientContext``: the
/// node's certificate checked against the CA file and its name, a client certificate for
/// `tls-auth-clients yes`), the handshake on the loop like the rest. Debian 12's hiredis 0.14.1
/// has no TLS (hiredis_ssl came with 1.0): hiredis is only the RESP reader here, the bytes are
/// moved by ``RedisConnection`` (libuv, OpenSSL on memory BIOs).
///
/// - Important: loop-confined: one thread, the loop's, uses one store.
public final class RedisCapStore: CapStore {
    public let host: String
    public let port: Int
    public let keyPrefix: String
    public let timeout: Duration
    public let reconnectInterval: Duration
    public let credentials: RedisCredentials?
    public let cluster: Bool
    /// TLS to every node; nil: plaintext.
    public let tls: TLSClientContext?
    let loop: UVLoop
    private let seed: RedisAddress
    private var connections: [RedisAddress: RedisConnection] = [:]
    /// Cluster: the master of each slot, an index into `owners`; -1 when unknown.
    private var slotOwner = [Int32](repeating: -1, count: RedisSlot.count)
    private var owners: [RedisAddress] = []
    private var hasSlotMap = false
    private var refreshing = false
    private var refreshWanted = false
    /// A read asked for within `minimumSlotMapInterval` of the last one: the first call after
    /// the interval starts it, so a map left partly stale by a failover is read again.
    private var refreshDue = false
    /// Cluster calls waiting for the first slot map.
    private var awaitingSlotMap: [Call] = []
    private var inFlight = 0
    private var isClosed = false
    /// Slot-map reads so far (tests read it).
    public private(set) var slotMapReads = 0
    /// Redirections followed so far (`MOVED` and `ASK`; tests read it).
    public private(set) var redirections = 0

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
    /// The script's SHA-1, as `EVALSHA` names it.
    static let scriptDigest = ScriptDigest.sha1Hex(script)
    static let maximumRedirections = 5
    /// Slot-map reads after the first are at least this far apart (by the calls' `now`), so
    /// that calls failing fast during an outage do not send a `CLUSTER SLOTS` each.
    static let minimumSlotMapInterval: Duration = .milliseconds(100)
    private var lastSlotMapRead: AdInstant?

    /// One call on its way: what to send, where it has been redirected, who to answer.
    private struct Call {
        var keys: [String]
        var arguments: [String]
        var slot: Int
        var now: AdInstant
        var redirects = 0
        var sentAsEval = false
        var completion: (Result<AppOpenCounts, CapStoreError>) -> Void
    }

    /// Connects lazily (the first call connects).
    /// - Parameters:
    ///   - loop: the loop the store's connections, timers and completions run on.
    ///   - host: an IP address (a name is resolved on the loop at every connect); with
    ///     `cluster`, any node of the cluster (the seed).
    ///   - keyPrefix: the first component of every key, e.g. "adloader:appopen"; no `{` or `}`.
    ///   - timeout: for the connect and for every reply.
    ///   - reconnectInterval: after a failure, calls to that node fail at once for this long.
    ///   - credentials: `AUTH` right after each connect (a refused AUTH fails the calls).
    ///   - cluster: Redis Cluster: route by slot, follow redirections.
    ///   - tls: TLS to every node (its server name, when set, is checked on every node's
    ///     certificate; unset, each node's own address is).
    public init(
        loop: UVLoop, host: String, port: Int, keyPrefix: String = "adloader:appopen",
        timeout: Duration = .milliseconds(200), reconnectInterval: Duration = .seconds(1),
        credentials: RedisCredentials? = nil, cluster: Bool = false, tls: TLSClientContext? = nil
    ) {
        self.loop = loop
        self.host = host
        self.port = port
        self.keyPrefix = keyPrefix
        self.timeout = timeout
        self.reconnectInterval = reconnectInterval
        self.credentials = credentials
        self.cluster = cluster
        self.tls = tls
        seed = RedisAddress(host: host, port: port)
    }

    public func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        run(key, now: now, sessionTimeout: sessionTimeout, increment: false, completion: completion)
    }

    public func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        run(key, now: now, sessionTimeout: sessionTimeout, increment: true, completion: completion)
    }

    /// Fails the calls in flight and closes every connection (their handles close on the
    /// loop's next iteration).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        let waiting = awaitingSlotMap
        awaitingSlotMap = []
        for call in waiting { call.completion(.failure(CapStoreError("redis \(seed): store closed"))) }
        for connection in connections.values { connection.close() }
    }

    /// Whether the seed's connection is open now (false during an outage's retry interval).
    public var isConnected: Bool { connections[seed]?.isConnected == true }

    /// Calls not answered yet (sent, or waiting for the slot map).
    public var pendingCalls: Int { inFlight + awaitingSlotMap.count }

    /// The node a call for `key` goes to now: the seed, or in a cluster the slot's master
    /// in the current map (nil before the map is read).
    public func node(for key: CapKey) -> String? {
        guard cluster else { return seed.description }
        let owner = slotOwner[RedisSlot.of(dayKey(key))]
        return owner < 0 ? nil : owners[Int(owner)].description
    }

    // MARK: Keys

    func deviceKey(_ key: CapKey) -> String {
        "\(keyPrefix):{\(key.loader.utf8.count):\(key.loader):\(key.deviceID.utf8.count):\(key.deviceID)}"
    }

    func dayKey(_ key: CapKey) -> String { "\(deviceKey(key)):d:\(key.day)" }

    func sessionKey(_ key: CapKey) -> String { "\(deviceKey(key)):s:\(key.sessionID.utf8.count):\(key.sessionID)" }

    // MARK: Calls

    private func run(
        _ key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        if isClosed {
            completion(.failure(CapStoreError("redis \(seed): store closed")))
            return
        }
        // The day's count lives until two days after the day ended at the device's offset:
        // long enough for any other offset the device may switch to.
        let dayTTL = max(
            1_000, (key.day.end(utcOffsetSeconds: key.utcOffsetSeconds) - now).milliseconds + 2 * 86_400_000)
        let keys = [sessionKey(key), dayKey(key)]
        let call = Call(
            keys: keys,
            arguments: [
                String(now.unixMilliseconds), String(max(1, sessionTimeout.milliseconds)), String(dayTTL),
                increment ? "1" : "0",
            ],
            slot: cluster ? RedisSlot.of(keys[1]) : 0, now: now, completion: completion)
        dispatch(call)
    }

    /// Sends `call` to `address`, or to its slot's master (the seed outside a cluster).
    private func dispatch(_ call: Call, to address: RedisAddress? = nil, asking: Bool = false) {
        var target = address ?? seed
        if cluster && address == nil {
            if refreshDue { refreshSlotMap(now: call.now) }
            let owner = slotOwner[call.slot]
            if owner < 0 {
                awaitingSlotMap.append(call)
                refreshSlotMap(now: call.now)
                return
            }
            target = owners[Int(owner)]
        }
        guard let connection = connection(to: target) else {
            call.completion(.failure(CapStoreError("redis \(target): cannot start a connection")))
            return
        }
        if asking { connection.send(["ASKING"], now: call.now) { _ in } }
        let command =
            (call.sentAsEval ? ["EVAL", Self.script] : ["EVALSHA", Self.scriptDigest]) + ["2"] + call.keys
            + call.arguments
        inFlight += 1
        connection.send(command, now: call.now) { [weak self] result in
            guard let self else { return }
            self.inFlight -= 1
            self.answered(call, result, from: target, asking: asking)
        }
    }

    private func answered(
        _ call: Call, _ result: Result<RedisReply, CapStoreError>, from address: RedisAddress, asking: Bool
    ) {
        let reply: RedisReply
        switch result {
        case .failure(let error):
            // A node failed: in a cluster its slots may have moved to a replica.
            if cluster { refreshSlotMap(now: call.now) }
            call.completion(.failure(error))
            return
        case .success(let value): reply = value
        }
        if case .array(let elements) = reply, elements.count == 2, case .integer(let session) = elements[0],
            case .integer(let day) = elements[1]
        {
            call.completion(.success(AppOpenCounts(session: session, day: day)))
            return
        }
        guard !isClosed else {
            call.completion(.failure(CapStoreError("redis \(address): store closed")))
            return
        }
        if let redirect = reply.redirect, call.redirects < Self.maximumRedirections {
            redirections += 1
            var next = call
            next.redirects += 1
            if !redirect.isAsk {
                setOwner(of: redirect.slot, to: redirect.address)
                refreshSlotMap(now: call.now)
            }
            dispatch(next, to: redirect.address, asking: redirect.isAsk)
            return
        }
        if let message = reply.errorMessage, message.hasPrefix("NOSCRIPT"), !call.sentAsEval {
            var next = call
            next.sentAsEval = true
            dispatch(next, to: address, asking: asking)
            return
        }
        let message = reply.errorMessage ?? "unexpected reply \(reply)"
        call.completion(.failure(CapStoreError("redis \(address): \(message)")))
    }

    private func connection(to address: RedisAddress) -> RedisConnection? {
        if let existing = connections[address] { return existing }
        guard
            let made = try? RedisConnection(
                address: address, loop: loop, timeout: timeout, reconnectInterval: reconnectInterval,
                credentials: credentials, tls: tls)
        else { return nil }
        connections[address] = made
        return made
    }

    // MARK: The slot map (cluster)

    private func setOwner(of slot: Int, to address: RedisAddress) {
        slotOwner[slot] = index(of: address)
    }

    private func index(of address: RedisAddress) -> Int32 {
        if let i = owners.firstIndex(of: address) { return Int32(i) }
        owners.append(address)
        return Int32(owners.count - 1)
    }

    /// Reads `CLUSTER SLOTS` from the first node not in its retry interval (the seed, then
    /// every node known); one read at a time, another one after it when asked meanwhile.
    private func refreshSlotMap(now: AdInstant) {
        guard cluster, !isClosed else { return }
        if refreshing {
            refreshWanted = true
            return
        }
        if hasSlotMap, let last = lastSlotMapRead, now < last + Self.minimumSlotMapInterval {
            refreshDue = true
            return
        }
        refreshDue = false
        lastSlotMapRead = now
        let candidates = [seed] + owners.filter { $0 != seed }
        refreshing = true
        refreshWanted = false
        readSlotMap(from: candidates[...], now: now, lastError: nil)
    }

    private func readSlotMap(from candidates: ArraySlice<RedisAddress>, now: AdInstant, lastError: CapStoreError?) {
        guard let address = candidates.first else {
            refreshing = false
            let waiting = awaitingSlotMap
            awaitingSlotMap = []
            let error = lastError ?? CapStoreError("redis \(seed): no node to read the slot map from")
            for call in waiting { call.completion(.failure(error)) }
            return
        }
        guard let connection = connection(to: address), !connection.isWaitingToRetry(now: now) else {
            readSlotMap(
                from: candidates.dropFirst(), now: now,
                lastError: lastError
                    ?? CapStoreError("redis \(address): unavailable (\(connections[address]?.lastError ?? ""))"))
            return
        }
        slotMapReads += 1
        connection.send(["CLUSTER", "SLOTS"], now: now) { [weak self] result in
            guard let self, !self.isClosed else { return }
            switch result {
            case .success(.array(let ranges)) where !ranges.isEmpty:
                self.apply(ranges, askedAt: address)
                self.refreshing = false
                let waiting = self.awaitingSlotMap
                self.awaitingSlotMap = []
                for call in waiting { self.dispatch(call) }
                if self.refreshWanted { self.refreshSlotMap(now: now) }
            case .success(let reply):
                let error = CapStoreError("redis \(address): CLUSTER SLOTS: \(reply.errorMessage ?? "no slots")")
                self.readSlotMap(from: candidates.dropFirst(), now: now, lastError: error)
            case .failure(let error):
                self.readSlotMap(from: candidates.dropFirst(), now: now, lastError: error)
            }
        }
    }

    /// `CLUSTER SLOTS`: `[[start, end, [host, port, id...], replicas...], ...]`.
    private func apply(_ ranges: [RedisReply], askedAt: RedisAddress) {
        var map = [Int32](repeating: -1, count: RedisSlot.count)
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3, case .integer(let start) = fields[0],
                case .integer(let end) = fields[1], case .array(let master) = fields[2], master.count >= 2,
                case .integer(let port) = master[1], start >= 0, end < RedisSlot.count, start <= end
            else { continue }
            var host = askedAt.host
            if let h = master[0].text, !h.isEmpty { host = h }
            let owner = index(of: RedisAddress(host: host, port: port))
            for slot in start...end { map[slot] = owner }
        }
        slotOwner = map
        hasSlotMap = true
    }
}
