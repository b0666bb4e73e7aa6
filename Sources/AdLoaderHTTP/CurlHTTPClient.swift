public import AdLoaderUV
internal import CCurl

/// The real ``HTTPClient``: libcurl's multi interface driven by a libuv loop, no threads.
///
/// curl's socket callback maps each socket it wants watched to a ``UVPoll``, its timer callback
/// to one ``UVTimer``; both feed `curl_multi_socket_action`. The multi handle keeps
/// connections for reuse (keep-alive, HTTP/2 multiplexing over TLS), gzip and deflate are
/// accepted and undone, and at most ``Configuration/maximumConcurrentRequests`` run at once:
/// later requests wait in order.
///
/// - Important: loop-confined; ``close()`` before releasing it. Requests still running or
///   waiting at close end ``HTTPError/Code/cancelled``.
public final class CurlHTTPClient: HTTPClient {
    /// Limits of one client (one demand source's connections).
    public struct Configuration: Hashable, Sendable {
        /// Requests running at once; later ones wait.
        public var maximumConcurrentRequests = 16
        /// Requests waiting beyond those; past it a request fails at once (``HTTPError/Code/transport``).
        public var maximumQueuedRequests = 1024
        /// The largest (decoded) body accepted.
        public var maximumResponseBytes = 1 << 20
        /// Connections kept for reuse.
        public var maximumIdleConnections = 8
        public var userAgent = "adloaderd"

        public init() {}
    }

    public let configuration: Configuration
    private let loop: UVLoop
    private let multi: UnsafeMutableRawPointer
    private let timer: UVTimer
    /// Runs completions outside of `send` and of curl's callbacks.
    private let completionTimer: UVTimer
    private var polls: [Int32: UVPoll] = [:]
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var waiting: [CurlTransfer] = []
    private var waitingHead = 0
    private var finished: [(CurlTransfer, Result<HTTPResponse, HTTPError>)] = []
    private var isClosed = false

    /// Called when a request has to wait because ``Configuration/maximumConcurrentRequests``
    /// are running (the cap binds); the owner reports it (rate-limited).
    public var onWait: (() -> Void)?
    /// Requests that had to wait for a running one to end.
    public private(set) var waitedCount: UInt64 = 0

    /// Requests running now (for tests and stats).
    public var runningCount: Int { running.count }
    /// Sockets watched now.
    public var watchedSocketCount: Int { polls.count }

    /// - Throws: ``HTTPError`` `.transport` when curl cannot start; ``UVError`` from the timers.
    public init(loop: UVLoop, configuration: Configuration = Configuration()) throws {
        self.loop = loop
        self.configuration = configuration
        guard curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK, let multi = curl_multi_init() else {
            throw HTTPError(code: .transport, message: "curl_multi_init failed")
        }
        self.multi = multi
        do {
            timer = try UVTimer(loop: loop)
        } catch {
            curl_multi_cleanup(multi)
            curl_global_cleanup()
            throw error
        }
        do {
            completionTimer = try UVTimer(loop: loop)
        } catch {
            timer.close()
            curl_multi_cleanup(multi)
            curl_global_cleanup()
            throw error
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = CCurl_multi_setopt_socket_callback(multi, curlSocketTrampoline)
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = CCurl_multi_setopt_timer_callback(multi, curlTimerTrampoline)
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maximumIdleConnections)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    }

    deinit {
        assert(isClosed, "CurlHTTPClient released without close()")
    }

    public func send(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, HTTPError>) -> Void) {
        let transfer = CurlTransfer(request: request, completion: completion, limit: configuration.maximumResponseBytes)
        if isClosed {
            complete(transfer, .failure(HTTPError(code: .cancelled, message: "client closed")))
        } else if running.count < configuration.maximumConcurrentRequests {
            start(transfer)
        } else if waiting.count - waitingHead < configuration.maximumQueuedRequests {
            waiting.append(transfer)
            waitedCount += 1
            onWait?()
        } else {
            complete(
                transfer,
                .failure(
                    HTTPError(
                        code: .transport, message: "\(configuration.maximumQueuedRequests) requests already waiting")))
        }
    }

    /// Cancels every request (each completes ``HTTPError/Code/cancelled``), stops watching,
    /// closes the handles. Calling it twice is harmless.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        let cancelled = HTTPError(code: .cancelled, message: "client closed")
        for (easy, transfer) in running {
            curl_multi_remove_handle(multi, easy)
            transfer.cleanup()
            finished.append((transfer, .failure(cancelled)))
        }
        running.removeAll()
        for transfer in waiting[waitingHead...] { finished.append((transfer, .failure(cancelled))) }
        waiting.removeAll()
        waitingHead = 0
        for poll in polls.values { poll.close() }
        polls.removeAll()
        curl_multi_cleanup(multi)
        curl_global_cleanup()
        timer.close()
        completionTimer.close()
        // Completions still owed run now: nothing of the loop is left to run them later.
        let owed = finished
        finished.removeAll()
        for (transfer, result) in owed { transfer.completion(result) }
    }

    private func start(_ transfer: CurlTransfer) {
        guard let easy = transfer.prepare(userAgent: configuration.userAgent) else {
            complete(transfer, .failure(HTTPError(code: .badRequest, message: "curl refused the request")))
            return
        }
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            transfer.cleanup()
            complete(
                transfer, .failure(HTTPError(code: .transport, message: String(cString: curl_multi_strerror(code)))))
            return
        }
        running[easy] = transfer
    }

    private func complete(_ transfer: CurlTransfer, _ result: Result<HTTPResponse, HTTPError>) {
        finished.append((transfer, result))
        if finished.count == 1 && !isClosed {
            completionTimer.start(timeout: 0) { [unowned self] in self.runCompletions() }
        }
    }

    private func runCompletions() {
        while !finished.isEmpty {
            let batch = finished
            finished.removeAll()
            for (transfer, result) in batch { transfer.completion(result) }
        }
    }

    // MARK: curl's callbacks and the loop's events

    fileprivate func watch(socket: Int32, what: Int32) -> Int32 {
        if what == CURL_POLL_REMOVE {
            if let poll = polls.removeValue(forKey: socket) {
                poll.stop()
                poll.close()
            }
            return 0
        }
        var events: UVPoll.Events = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { events.insert(.readable) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { events.insert(.writable) }
        do {
            let poll: UVPoll
            if let existing = polls[socket] {
                poll = existing
            } else {
                poll = try UVPoll(loop: loop, fileDescriptor: socket)
                polls[socket] = poll
            }
            try poll.start(events) { [unowned self] result in self.socketReady(socket, result) }
        } catch {
            return -1
        }
        return 0
    }

    fileprivate func setTimer(milliseconds: Int) -> Int32 {
        if milliseconds < 0 {
            timer.stop()
        } else {
            // A 0 ms timer re-armed from its own callback would starve I/O on libuv 1.44.
            timer.start(timeout: UInt64(max(milliseconds, 1))) { [unowned self] in
                self.action(socket: CURL_SOCKET_TIMEOUT, flags: 0)
            }
        }
        return 0
    }

    private func socketReady(_ socket: Int32, _ result: Result<UVPoll.Events, UVError>) {
        var flags: Int32 = 0
        switch result {
        case .success(let events):
            if events.contains(.readable) { flags |= CURL_CSELECT_IN }
            if events.contains(.writable) { flags |= CURL_CSELECT_OUT }
        case .failure:
            flags = CURL_CSELECT_ERR
        }
        action(socket: socket, flags: flags)
    }

    private func action(socket: Int32, flags: Int32) {
        guard !isClosed else { return }
        var stillRunning: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, flags, &stillRunning)
        collectFinished()
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = CCurl_message_result(message)
            let key = easy
            curl_multi_remove_handle(multi, easy)
            guard let transfer = running.removeValue(forKey: key) else { continue }
            let result = transfer.finish(code)
            transfer.cleanup()
            complete(transfer, result)
        }
        while running.count < configuration.maximumConcurrentRequests, waitingHead < waiting.count {
            let next = waiting[waitingHead]
            waitingHead += 1
            start(next)
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        }
    }
}

private func curlSocketTrampoline(
    _ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32, _ user: UnsafeMutableRawPointer?,
    _ socketUser: UnsafeMutableRawPointer?
) -> Int32 {
    guard let user else { return -1 }
    return Unmanaged<CurlHTTPClient>.fromOpaque(user).takeUnretainedValue().watch(socket: socket, what: what)
}

private func curlTimerTrampoline(
    _ multi: UnsafeMutableRawPointer?, _ milliseconds: Int, _ user: UnsafeMutableRawPointer?
) -> Int32 {
    guard let user else { return -1 }
    return Unmanaged<CurlHTTPClient>.fromOpaque(user).takeUnretainedValue().setTimer(milliseconds: milliseconds)
}
