import AdLoaderCore
import AdLoaderHTTP

/// Fires notice URLs (GET) with an outbox: a notice is delivered when the exchange answers
/// 200 or 204; anything else (another status, a transport failure, a timeout) is tried again
/// every `retryInterval` until `attempts` tries were made (OpenRTB 2.6's guidance: every 10 s
/// for a minute), then given up and counted. A delivered notice is never sent again.
///
/// At most `queueLimit` notices wait, are in flight or wait for their next try; more are
/// dropped and counted. With a ``NoticeOutboxStore`` each notice is stored, marked sending,
/// before each try, stored unmarked when the try failed, and removed once delivered or given
/// up; ``restore()`` sends the ones a previous run left between tries (a stop, or a crash),
/// and reports without sending the ones it left during a try (the exchange may have counted
/// them: ``uncertain``). So a notice is never delivered twice across restarts; what a crash
/// can cost is the notices in flight at that instant (at most the client's concurrency).
///
/// - Important: loop-confined.
final class NoticeSender {
    struct Policy: Hashable, Sendable {
        /// Between the end of one try and the next.
        var retryInterval: Duration = .seconds(10)
        /// Tries in all, the first included: 1 + 60 s / 10 s.
        var attempts = 7
    }

    private let client: any HTTPClient
    private let queueLimit: Int
    private let timeout: Duration
    private let policy: Policy
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private let store: (any NoticeOutboxStore)?
    private let sourceName: String
    private var nextID: UInt64 = 1
    /// Waiting for their next try, by id.
    private var retries: [UInt64: (notice: OutboxNotice, task: any ScheduledTask)] = [:]
    private(set) var pending = 0
    private var isClosed = false
    /// Counters, read into ``OpenRTBStats``.
    private(set) var sent: UInt64 = 0
    private(set) var failed: UInt64 = 0
    private(set) var dropped: UInt64 = 0
    private(set) var retried: UInt64 = 0
    private(set) var restored: UInt64 = 0
    /// Left by a previous run during a try: not sent again (it may have been delivered).
    private(set) var uncertain: UInt64 = 0

    init(
        client: any HTTPClient, queueLimit: Int, timeout: Duration, policy: Policy = Policy(), clock: any AdClock,
        scheduler: any AdScheduler, store: (any NoticeOutboxStore)? = nil, sourceName: String = ""
    ) {
        self.client = client
        self.queueLimit = queueLimit
        self.timeout = timeout
        self.policy = policy
        self.clock = clock
        self.scheduler = scheduler
        self.store = store
        self.sourceName = sourceName
    }

    /// Sends the notices a previous run left in the store (each counts its earlier tries).
    /// - Returns: how many.
    @discardableResult
    func restore() -> Int {
        guard let store else { return 0 }
        let left = store.pendingNotices(source: sourceName)
        var sent = 0
        for notice in left {
            nextID = max(nextID, notice.id &+ 1)
            if notice.sending {
                // At most once: the exchange may have it already.
                uncertain += 1
                store.removeNotice(id: notice.id, source: sourceName)
                continue
            }
            pending += 1
            restored += 1
            sent += 1
            send(notice)
        }
        return sent
    }

    /// The headers a notice for a show on `device` carries: the IAB's server-side forwarding
    /// headers (`X-Forwarded-For` and `X-Device-IP` with the IP, `User-Agent` and
    /// `X-Device-User-Agent` with the user agent), each only when the Return said it.
    static func headers(for device: ImpressionDevice) -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        if !device.ip.isEmpty {
            headers.append(HTTPHeader("X-Forwarded-For", device.ip))
            headers.append(HTTPHeader("X-Device-IP", device.ip))
        }
        if !device.userAgent.isEmpty {
            headers.append(HTTPHeader("User-Agent", device.userAgent))
            headers.append(HTTPHeader("X-Device-User-Agent", device.userAgent))
        }
        return headers
    }

    /// Queues one notice, for a show on `device` (its headers, ``headers(for:)``); false when it
    /// was dropped (queue full or closed).
    @discardableResult
    func fire(_ url: String, device: ImpressionDevice = ImpressionDevice()) -> Bool {
        guard !isClosed, pending < queueLimit else {
            dropped += 1
            return false
        }
        pending += 1
        let notice = OutboxNotice(id: nextID, url: url, device: device)
        nextID &+= 1
        send(notice)
        return true
    }

    /// Stops taking notices and cancels the waiting retries; with a store, every notice not
    /// delivered stays in it for the next start (ones in flight end by their client's close).
    func close() {
        isClosed = true
        for (_, waiting) in retries { waiting.task.cancel() }
        // Each waiting notice is already stored with its tries; without a store it is lost.
        pending -= retries.count
        if store == nil { dropped += UInt64(retries.count) }
        retries.removeAll()
    }

    /// Marks `notice` as under way in the store, then tries it.
    private func send(_ notice: OutboxNotice) {
        if let store {
            var marked = notice
            marked.sending = true
            store.putNotice(marked, source: sourceName)
        }
        let request = HTTPRequest(
            method: .get, url: notice.url, headers: Self.headers(for: notice.device), timeout: timeout,
            connectTimeout: timeout)
        client.send(request) { [self] result in
            switch result {
            case .success(let response) where response.status == 200 || response.status == 204:
                sent += 1
                pending -= 1
                store?.removeNotice(id: notice.id, source: sourceName)
            case .failure(let error) where error.code == .cancelled && isClosed:
                // Cut by the stop: kept in the store for the next start (dropped without one).
                pending -= 1
                if store == nil { dropped += 1 }
            case .success, .failure:
                var next = notice
                next.attempts += 1
                let giveUp: Bool
                if case .failure(let error) = result, error.code == .badRequest {
                    giveUp = true
                } else {
                    giveUp = false
                }
                if giveUp || isClosed || next.attempts >= policy.attempts {
                    if isClosed && !giveUp {
                        if let store { store.putNotice(next, source: sourceName) } else { dropped += 1 }
                    } else {
                        failed += 1
                        store?.removeNotice(id: notice.id, source: sourceName)
                    }
                    pending -= 1
                    return
                }
                store?.putNotice(next, source: sourceName)
                retried += 1
                let task = scheduler.schedule(at: clock.now + policy.retryInterval) { [weak self] in
                    guard let self, self.retries.removeValue(forKey: next.id) != nil else { return }
                    self.send(next)
                }
                retries[next.id] = (next, task)
            }
        }
    }
}
