import AdLoaderHTTP

/// Fires notice URLs (GET), fire-and-forget but bounded: at most `queueLimit` waiting or in
/// flight (more are dropped and counted), each with `timeout`, retried once after a transport
/// failure (any HTTP status, even 5xx, counts as delivered: the exchange saw it).
///
/// - Important: loop-confined.
final class NoticeSender {
    private let client: any HTTPClient
    private let queueLimit: Int
    private let timeout: Duration
    private(set) var pending = 0
    private var isClosed = false
    /// Counters, read into ``OpenRTBStats``.
    private(set) var sent: UInt64 = 0
    private(set) var failed: UInt64 = 0
    private(set) var dropped: UInt64 = 0

    init(client: any HTTPClient, queueLimit: Int, timeout: Duration) {
        self.client = client
        self.queueLimit = queueLimit
        self.timeout = timeout
    }

    /// Queues one notice; false when it was dropped (queue full or closed).
    @discardableResult
    func fire(_ url: String) -> Bool {
        guard !isClosed, pending < queueLimit else {
            dropped += 1
            return false
        }
        pending += 1
        send(url, retried: false)
        return true
    }

    /// Stops taking notices; ones in flight still end (their client's close cancels them).
    func close() { isClosed = true }

    private func send(_ url: String, retried: Bool) {
        let request = HTTPRequest(method: .get, url: url, timeout: timeout, connectTimeout: timeout)
        client.send(request) { [self] result in
            switch result {
            case .success:
                sent += 1
                pending -= 1
            case .failure(let error):
                if !retried && !isClosed && error.code != .badRequest && error.code != .cancelled {
                    send(url, retried: true)
                } else {
                    failed += 1
                    pending -= 1
                }
            }
        }
    }
}
