public import AdLoaderCore
public import AdLoaderTLS
import AdLoaderUV

/// What a restart keeps, whichever store holds it: the pools suspended at a clean stop and the
/// outbox of undelivered notices. ``SQLitePoolStore`` (the default, with the write-through
/// journal next to its file) and ``RedisPoolStore`` (the fleet's Redis, keyed by instance name).
///
/// - Important: loop-confined: one thread uses one store.
public protocol PoolStore: NoticeOutboxStore {
    /// Where it is, for log lines: a file path or `redis://host:port/key`.
    var location: String { get }
    /// Replaces the stored suspension with `snapshots`; the bytes written.
    func saveSuspension(_ snapshots: [PoolSnapshot]) throws(PoolStoreError) -> Int
    /// The suspension a clean stop left (nil when none), left in the store.
    func loadSuspension() throws(PoolStoreError) -> [PoolSnapshot]?
    /// Deletes the suspension once what it held is safe elsewhere.
    func deleteSuspension() throws(PoolStoreError)
    /// Notices stored, every source.
    func noticeCount() -> Int
    func close()
}

extension SQLitePoolStore: PoolStore {
    public var location: String { path }
}

/// The pool store in the fleet's Redis (`poolStore.type` `redis`): one key per replica,
/// `<redisKeyPrefix>:{<instance name>}` (a hash tag: one slot), holding one versioned blob: the
/// pools suspended at a clean stop and the notice outbox.
///
/// The smallest honest version (issue 27): Redis is read once at the start (the blob, before
/// any call is served and before the loop runs) and written once at the stop (after the
/// drain), waiting for the reply at most `timeout`; never while the daemon's loop serves calls.
/// The connection is the cap store's (``RedisConnection``, TLS included), one per command (none
/// is kept from the start to the stop), on a loop of the store's own, which the read and the
/// write run until they are answered. So, unlike
/// ``SQLitePoolStore``:
/// - **no write-through journal**: a crash (`kill -9`, OOM) loses the pools since the start,
///   as with the store off; a clean stop (SIGTERM) keeps every unexpired ad and lease;
/// - **notices are in memory between the start and the stop**: a clean stop keeps the
///   undelivered ones, a crash loses them.
/// What it buys: a replica's pools follow its instance name, not its disk (a pod rescheduled
/// on another node, same name, gets its pools back).
///
/// A blob this build cannot read (another format version, cut short) is refused whole:
/// ``loadSuspension()`` throws and the daemon starts empty (never half-restored).
public final class RedisPoolStore: PoolStore {
    /// The blob's first byte. 2: a notice carries the device of its show (IP, user agent);
    /// a version 1 blob is still read, its notices without a device.
    public static let formatVersion: UInt8 = 2

    public let key: String
    public let location: String
    /// The store's own loop: the start's read and the stop's write run it until they are
    /// answered, whether or not the daemon's loop runs (it does not serve calls then).
    private let loop: UVLoop
    private let address: RedisAddress
    private let timeout: Duration
    private let credentials: RedisCredentials?
    private let tls: TLSClientContext?
    private var isClosed = false
    private var notices: [String: [UInt64: OutboxNotice]] = [:]
    private var suspension: [PoolSnapshot]?
    private var unreadable: PoolStoreError?

    /// Connects, authenticates and reads the key (the pools and notices the last clean stop
    /// left are held until the daemon takes them).
    /// - Throws: ``PoolStoreError`` `.io` when Redis cannot be reached, refuses AUTH or the
    ///   read; a blob that does not decode is not thrown here but by ``loadSuspension()``
    ///   (its notices are lost with it).
    public init(
        host: String, port: Int, key: String, timeout: Duration, credentials: RedisCredentials?,
        tls: TLSClientContext? = nil
    ) throws(PoolStoreError) {
        self.key = key
        location = "\(tls == nil ? "redis" : "rediss")://\(host):\(port)/\(key)"
        address = RedisAddress(host: host, port: port)
        self.timeout = timeout
        self.credentials = credentials
        self.tls = tls
        do {
            loop = try UVLoop()
        } catch {
            throw PoolStoreError(.io, "pool store \(location): \(error)")
        }
        let reply: Reply
        do {
            reply = try command(["GET", key])
        } catch {
            close()
            throw error
        }
        guard case .bytes(let blob) = reply else { return }
        do {
            let (snapshots, notices) = try Self.decode(blob)
            suspension = snapshots
            for (source, notice) in notices { self.notices[source, default: [:]][notice.id] = notice }
        } catch {
            unreadable = PoolStoreError(.unreadable, "pool store \(location): \(error.message)")
        }
    }

    deinit { close() }

    /// Closes the store's loop (idempotent; no connection outlives a command).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = loop.runUntilIdle()
        _ = loop.closeRemainingHandles()
        try? loop.close()
    }

    // MARK: NoticeOutboxStore (memory; written with the suspension)

    public func pendingNotices(source: String) -> [OutboxNotice] {
        (notices[source] ?? [:]).values.sorted { $0.id < $1.id }
    }

    public func putNotice(_ notice: OutboxNotice, source: String) {
        notices[source, default: [:]][notice.id] = notice
    }

    public func removeNotice(id: UInt64, source: String) { notices[source]?[id] = nil }

    public func noticeCount() -> Int { notices.values.reduce(0) { $0 + $1.count } }

    // MARK: Suspension

    public func saveSuspension(_ snapshots: [PoolSnapshot]) throws(PoolStoreError) -> Int {
        let blob = Self.encode(snapshots, notices: notices)
        let reply = try command(["SET", key], blob: blob)
        guard case .status = reply else {
            throw PoolStoreError(.io, "pool store \(location): SET answered \(reply)")
        }
        return blob.count
    }

    public func loadSuspension() throws(PoolStoreError) -> [PoolSnapshot]? {
        if let unreadable { throw unreadable }
        return suspension
    }

    public func deleteSuspension() throws(PoolStoreError) {
        suspension = nil
        unreadable = nil
        // The notices stay in memory; the next stop writes them again.
        _ = try command(["DEL", key])
    }

    // MARK: The blob

    /// Version byte; notices (count; source, id, url, attempts, sending, device IP, device user
    /// agent); pools (count; header blob; ads count; each: record blob, lease flag, lease id,
    /// slot, lease expiry).
    static func encode(_ snapshots: [PoolSnapshot], notices: [String: [UInt64: OutboxNotice]]) -> [UInt8] {
        var writer = StoreRecordWriter()
        writer.byte(formatVersion)
        let all = notices.sorted { $0.key < $1.key }.flatMap { source, byID in
            byID.values.sorted { $0.id < $1.id }.map { (source, $0) }
        }
        writer.unsigned(UInt64(all.count))
        for (source, notice) in all {
            writer.string(source)
            writer.unsigned(notice.id)
            writer.string(notice.url)
            writer.unsigned(UInt64(notice.attempts))
            writer.bool(notice.sending)
            writer.string(notice.device.ip)
            writer.string(notice.device.userAgent)
        }
        writer.unsigned(UInt64(snapshots.count))
        for snapshot in snapshots {
            writer.blob(StoreRecordCodec.encodePool(snapshot))
            writer.unsigned(UInt64(snapshot.ads.count + snapshot.leases.count))
            for pooled in snapshot.ads {
                writer.blob(StoreRecordCodec.encode(pooled.ad, context: pooled.sourceState))
                writer.bool(false)
            }
            for leased in snapshot.leases {
                writer.blob(StoreRecordCodec.encode(leased.pooled.ad, context: leased.pooled.sourceState))
                writer.bool(true)
                writer.unsigned(leased.leaseID)
                writer.optionalString(leased.slot)
                writer.signed(leased.expiresAt.unixMilliseconds)
            }
        }
        return writer.bytes
    }

    static func decode(
        _ bytes: [UInt8]
    ) throws(StoreRecordError) -> (snapshots: [PoolSnapshot], notices: [(String, OutboxNotice)]) {
        var reader = StoreRecordReader(bytes)
        let version = try reader.byte()
        guard version == formatVersion || version == 1 else {
            throw StoreRecordError("format version \(version) (this build reads version \(formatVersion))")
        }
        var notices: [(String, OutboxNotice)] = []
        let noticeCount = try reader.int()
        guard noticeCount <= reader.remaining else { throw StoreRecordError("notice count \(noticeCount) too large") }
        for _ in 0..<noticeCount {
            let source = try reader.string()
            let id = try reader.unsigned()
            let url = try reader.string()
            let attempts = try reader.int()
            let sending = try reader.bool()
            var device = ImpressionDevice()
            if version > 1 {  // version 1 kept no device
                device.ip = try reader.string()
                device.userAgent = try reader.string()
            }
            notices.append(
                (source, OutboxNotice(id: id, url: url, attempts: attempts, device: device, sending: sending)))
        }
        var snapshots: [PoolSnapshot] = []
        let poolCount = try reader.int()
        guard poolCount <= reader.remaining else { throw StoreRecordError("pool count \(poolCount) too large") }
        for _ in 0..<poolCount {
            var snapshot = try StoreRecordCodec.decodePool(try reader.blob())
            let adCount = try reader.int()
            guard adCount <= reader.remaining else { throw StoreRecordError("ad count \(adCount) too large") }
            for _ in 0..<adCount {
                let decoded = try StoreRecordCodec.decodeAd(try reader.blob())
                let pooled = PoolSnapshot.PooledAd(ad: decoded.ad, sourceState: decoded.context)
                if try reader.bool() {
                    let leaseID = try reader.unsigned()
                    let slot = try reader.optionalString()
                    let expiresAt = AdInstant(unixMilliseconds: try reader.signed())
                    snapshot.leases.append(.init(leaseID: leaseID, slot: slot, expiresAt: expiresAt, pooled: pooled))
                } else {
                    snapshot.ads.append(pooled)
                }
            }
            snapshots.append(snapshot)
        }
        guard reader.isAtEnd else { throw StoreRecordError("\(reader.remaining) bytes after the last pool") }
        return (snapshots, notices)
    }

    // MARK: Commands (start and stop only, on the store's own loop)

    enum Reply: CustomStringConvertible {
        case bytes([UInt8])
        case status(String)
        case integer(Int64)
        case null
        case error(String)

        var description: String {
            switch self {
            case .bytes(let b): "\(b.count) bytes"
            case .status(let s): s
            case .integer(let i): "\(i)"
            case .null: "nil"
            case .error(let e): "error \(e)"
            }
        }
    }

    /// Sends `arguments` (and `blob` as one more argument) on a connection of its own and
    /// waits for the reply: the store's own loop runs until the reply or the failure (the
    /// connection's timer bounds it), then the connection closes. A Redis error reply or a
    /// broken connection throws.
    ///
    /// One connection per command: the start's would sit idle until the stop (days), unread
    /// (this loop runs only inside a command), and Redis may end it meanwhile (its `timeout`
    /// for idle clients, a restart, a failover); the stop's write would go to that dead
    /// connection and fail ("connection closed"), losing every pool. Over TLS the next
    /// handshake resumes the session (``TLSClientContext``).
    func command(_ arguments: [String], blob: [UInt8]? = nil) throws(PoolStoreError) -> Reply {
        guard !isClosed else { throw PoolStoreError(.io, "pool store \(location): closed") }
        let connection: RedisConnection
        do {
            connection = try RedisConnection(
                address: address, loop: loop, timeout: timeout, reconnectInterval: .zero, credentials: credentials,
                tls: tls)
        } catch {
            throw PoolStoreError(.io, "pool store \(location): \(error)")
        }
        var result: Result<RedisReply, CapStoreError>?
        connection.send(
            bytes: arguments.map { Array($0.utf8) } + (blob.map { [$0] } ?? []), now: AdInstant(unixMilliseconds: 0)
        ) { result = $0 }
        while result == nil { _ = loop.runOnce() }
        connection.close()
        // The handles' close callbacks (TCP, TLS deferral, timer): nothing of it is left on the loop.
        _ = loop.runUntilIdle()
        switch result {
        case .failure(let error)?:
            throw PoolStoreError(.io, "pool store \(location): \(arguments[0]) failed: \(error.message)")
        case .success(.error(let text))?:
            throw PoolStoreError(.io, "pool store \(location): \(arguments[0]) answered \(text)")
        case .success(.bulk(let bytes))?: return .bytes(bytes)
        case .success(.status(let text))?: return .status(text)
        case .success(.integer(let value))?: return .integer(Int64(value))
        case .success(.null)?, nil: return .null
        case .success(let other)?:
            throw PoolStoreError(.io, "pool store \(location): \(arguments[0]) answered \(other)")
        }
    }
}
