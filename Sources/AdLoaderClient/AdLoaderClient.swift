public import AdLoaderModel
public import AdLoaderWire

/// A client of adloaderd's framed protocol (Proto/PROTOCOL.md).
///
/// One client is one connection; calls from any number of tasks are pipelined on it and
/// matched to their answers by call id, in whatever order the server completes them.
/// Server answers other than OK are thrown as `Status`; local failures to connect as
/// ``AdLoaderClientError``. Losing the connection fails the calls in flight with UNAVAILABLE.
///
/// A string argument holding a NUL byte (`"a\0b"`) cannot be sent as is (the protocol's
/// strings are UTF-8 without NUL): such a call is refused locally with an INVALID_ARGUMENT
/// `Status` naming the field (`ad_unit_id: must not contain NUL bytes (not sent)`), and
/// nothing is sent.
///
/// Cancelling the task of a call cancels the call at the server too (the call throws
/// `CancellationError` at once). A `timeout` is sent as the call's deadline and also
/// enforced locally (with a small margin): expiry throws DEADLINE_EXCEEDED.
public final class AdLoaderClient: Sendable {
    private let connection: ClientConnection
    /// Where this client is connected.
    public let endpoint: Endpoint
    /// Sent with every call: `authorization: Bearer <token>` when a token was given.
    private let callMetadata: [MetadataEntry]

    /// Extra time the local deadline timer allows for the network, after the server's own deadline.
    static let localDeadlineMargin: Duration = .milliseconds(500)

    private init(connection: ClientConnection, endpoint: Endpoint, token: String?) {
        self.connection = connection
        self.endpoint = endpoint
        callMetadata = token.map { [MetadataEntry(key: "authorization", value: "Bearer \($0)")] } ?? []
    }

    deinit { connection.close() }

    /// Connects, sends the preface and starts reading answers.
    /// - Parameters:
    ///   - endpoint: TCP `host:port` or a Unix socket path.
    ///   - maximumMessageSize: the largest answer accepted (default 4 MiB, as the server).
    ///   - token: a bearer token sent with every call (`authorization` metadata), for a
    ///     server configured with `auth.tokens`; nil for none.
    ///   - tls: TLS settings for a daemon that serves TLS (``ClientTLS``: CA file, client
    ///     certificate, server name); nil for cleartext. TCP endpoints only.
    /// - Throws: ``AdLoaderClientError`` when the server cannot be reached or the TLS handshake
    ///   fails (`.tlsFailed`, naming why), `Status` when the connection breaks at once.
    public static func connect(
        to endpoint: Endpoint, maximumMessageSize: Int = 4 << 20, token: String? = nil, tls: ClientTLS? = nil
    ) throws -> AdLoaderClient {
        var host = ""
        if tls != nil {
            guard case .tcp(let name, _) = endpoint else {
                throw AdLoaderClientError(
                    code: .invalidEndpoint, message: "TLS needs a TCP endpoint (the Unix socket is cleartext)")
            }
            host = name
        }
        let fd = try Socket.connect(to: endpoint)
        var session: TLSClientSession? = nil
        if let tls {
            do { session = try TLSClientSession(fd: fd, options: tls, host: host) } catch {
                Socket.close(fd)
                throw error
            }
        }
        let connection = ClientConnection(fd: fd, maximumMessageSize: maximumMessageSize, tls: session)
        try connection.start()
        return AdLoaderClient(connection: connection, endpoint: endpoint, token: token)
    }

    /// Closes the connection; calls in flight fail with UNAVAILABLE. Also done on deinit.
    public func close() { connection.close() }

    // MARK: - Methods

    /// Tops the pool of (`loader`, `adUnitID`) up; see PROTOCOL.md 7.1.
    /// - Parameters:
    ///   - loader: empty for "default".
    ///   - timeout: the call's deadline; nil for none.
    /// - Throws: `Status` (INVALID_ARGUMENT, UNAVAILABLE, ...), `CancellationError`.
    /// - Parameter count: the ads the caller will want soon (0: the demand target alone).
    public func prefetch(
        adUnitID: String, loader: String = "", count: UInt32 = 0, timeout: Duration? = nil
    ) async throws -> PrefetchResult {
        let answer = try await unary(
            method: MethodName.prefetch,
            request: PrefetchRequestMessage(adUnitID: adUnitID, loader: loader, count: count),
            timeout: timeout)
        return try Self.decode(PrefetchResponseMessage.self, answer).result
    }

    /// Borrows one ad; see PROTOCOL.md 7.2.
    /// - Parameters:
    ///   - slot: the feed cell, or empty for none.
    ///   - wait: how long the server may park the call for an ad to arrive (zero: answer at once).
    /// - Returns: `.leased(lease, reused:)` or `.noAdYet` (never `.unavailable`: that is thrown
    ///   as an UNAVAILABLE `Status`).
    public func borrow(
        adUnitID: String, loader: String = "", slot: String = "", wait: Duration = .zero, timeout: Duration? = nil
    ) async throws -> BorrowResult {
        let request = BorrowRequestMessage(
            adUnitID: adUnitID, loader: loader, slot: slot, waitMilliseconds: Self.milliseconds(wait))
        let answer = try await unary(method: MethodName.borrow, request: request, timeout: timeout)
        let response = try Self.decode(BorrowResponseMessage.self, answer)
        guard let result = response.result else {
            throw Status(
                code: .internalError, message: "BorrowResponse with outcome \(response.outcome) and no usable lease")
        }
        return result
    }

    /// Ends a lease; see PROTOCOL.md 7.3.
    /// - Returns: what became of the ad; nil when the server sent an outcome this version does not know.
    /// - Throws: `Status` NOT_FOUND for an unknown lease.
    public func returnLease(
        _ leaseID: UInt64, shown: Bool, deviceIP: String = "", deviceUserAgent: String = "", timeout: Duration? = nil
    ) async throws -> ReturnOutcome? {
        let answer = try await unary(
            method: MethodName.returnLease,
            request: ReturnRequestMessage(
                leaseID: leaseID, shown: shown, deviceIP: deviceIP, deviceUserAgent: deviceUserAgent),
            timeout: timeout)
        return try Self.decode(ReturnResponseMessage.self, answer).outcome
    }

    /// Ends a lease and invalidates its ad's creative: the ad is removed and the creative is
    /// not lent again by its loader for the loader's invalidationBlockTime; see PROTOCOL.md 7.3.
    /// - Parameter reason: why, 1...1024 bytes (e.g. "bad creative").
    /// - Returns: `.invalidated`; nil for an outcome this version does not know.
    /// - Throws: `Status` NOT_FOUND for an unknown lease, INVALID_ARGUMENT for a bad reason.
    public func invalidateLease(
        _ leaseID: UInt64, shown: Bool, reason: String, timeout: Duration? = nil
    ) async throws -> ReturnOutcome? {
        let request = ReturnRequestMessage(leaseID: leaseID, shown: shown, invalidate: true, invalidateReason: reason)
        let answer = try await unary(method: MethodName.returnLease, request: request, timeout: timeout)
        return try Self.decode(ReturnResponseMessage.self, answer).outcome
    }

    /// Disables or enables a loader at run time; see PROTOCOL.md 7.7.
    /// - Returns: whether the loader's state changed (false: it already was so).
    /// - Throws: `Status` INVALID_ARGUMENT for an unknown loader.
    public func setLoaderEnabled(_ loader: String, enabled: Bool, timeout: Duration? = nil) async throws -> Bool {
        let request = SetLoaderEnabledRequestMessage(loader: loader, enabled: enabled)
        let answer = try await unary(method: MethodName.setLoaderEnabled, request: request, timeout: timeout)
        return try Self.decode(SetLoaderEnabledResponseMessage.self, answer).changed
    }

    /// Asks the daemon to re-read its configuration file; see PROTOCOL.md 7.8.
    /// - Returns: what changed, by loader.
    /// - Throws: `Status` FAILED_PRECONDITION with the reason when the new configuration is refused.
    public func reload(timeout: Duration? = nil) async throws -> ReconfigureResult {
        let answer = try await unary(method: MethodName.reload, request: ReloadRequestMessage(), timeout: timeout)
        return try Self.decode(ReloadResponseMessage.self, answer).result
    }

    /// Which daemon answered and what it runs (version, build, instance, uptime, features).
    public func serverInfo(timeout: Duration? = nil) async throws -> ServerInfoResponseMessage {
        let answer = try await unary(
            method: MethodName.serverInfo, request: ServerInfoRequestMessage(), timeout: timeout)
        return try Self.decode(ServerInfoResponseMessage.self, answer)
    }

    /// Plans a window of a feed (PROTOCOL.md 7.11): every ad position in it with its lease or
    /// "coming"; the same window planned again answers the same leases.
    public func plan(_ request: PlanRequestMessage, timeout: Duration? = nil) async throws -> FeedPlan {
        let answer = try await unary(method: MethodName.plan, request: request, timeout: timeout)
        return try Self.decode(PlanResponseMessage.self, answer).plan
    }

    /// Asks whether an app start or return to the foreground shows an app-open ad; see
    /// PROTOCOL.md 7.6. When the answer is SHOW, return its lease with `shown` once displayed:
    /// that moves the device's counts.
    /// - Parameters:
    ///   - adUnitID: the app-open pool to lend from.
    ///   - loader: empty for "default"; must be a loader of format appOpen.
    /// - Throws: `Status` (INVALID_ARGUMENT naming the field, FAILED_PRECONDITION for a loader
    ///   of another format, ...).
    public func appOpen(
        _ request: AppOpenRequest, adUnitID: String, loader: String = "", timeout: Duration? = nil
    ) async throws -> AppOpenResponseMessage {
        let answer = try await unary(
            method: MethodName.appOpen,
            request: AppOpenRequestMessage(request: request, adUnitID: adUnitID, loader: loader),
            timeout: timeout)
        return try Self.decode(AppOpenResponseMessage.self, answer)
    }

    /// Counters and gauges of the pools matching the filters (empty = all); see PROTOCOL.md 7.4.
    public func stats(loader: String = "", adUnitID: String = "", timeout: Duration? = nil) async throws -> [PoolStats]
    {
        let answer = try await unary(
            method: MethodName.stats, request: StatsRequestMessage(loader: loader, adUnitID: adUnitID), timeout: timeout
        )
        return try Self.decode(StatsResponseMessage.self, answer).pools
    }

    /// The whole Stats answer: the pools matching the filters and the counters of the
    /// matching loaders' demand sources (notices, dropped bids); see PROTOCOL.md 7.4.
    public func statsResponse(loader: String = "", adUnitID: String = "", timeout: Duration? = nil) async throws
        -> StatsResponseMessage
    {
        let answer = try await unary(
            method: MethodName.stats, request: StatsRequestMessage(loader: loader, adUnitID: adUnitID), timeout: timeout
        )
        return try Self.decode(StatsResponseMessage.self, answer)
    }

    /// Streams pool events (PROTOCOL.md 7.5) until the stream is dropped or its task cancelled
    /// (which cancels the call), the deadline passes, or the server ends it.
    ///
    /// The stream finishes normally when the consumer cancelled it, and throws the `Status`
    /// otherwise (e.g. UNAVAILABLE at server shutdown). Events of kinds this version does not
    /// know are skipped; an event that does not decode otherwise (e.g. a string with a NUL or
    /// invalid UTF-8) ends the stream with INTERNAL, as a unary answer that does not decode.
    public func watch(
        loader: String = "", adUnitID: String = "", kinds: [AdEvent.Kind] = [], timeout: Duration? = nil
    ) -> AsyncThrowingStream<AdEvent, any Error> {
        let frames = stream(
            method: MethodName.watch, request: WatchRequestMessage(loader: loader, adUnitID: adUnitID, kinds: kinds),
            timeout: timeout)
        return AsyncThrowingStream { continuation in
            let pump = Task {
                do {
                    for try await frame in frames {
                        if frame.end {
                            if frame.status.code == .ok || frame.status.code == .cancelled {
                                continuation.finish()
                            } else {
                                continuation.finish(throwing: frame.status)
                            }
                            return
                        }
                        if let body = frame.message {
                            do throws(FrameError) {
                                continuation.yield(try EventMessage(decoding: body).event)
                            } catch  where error.message.hasPrefix("kind: unknown event kind") {
                                continue  // a kind of a later version
                            } catch {
                                throw Status(
                                    code: .internalError,
                                    message: "the server's answer does not decode: \(error.message)")
                            }
                        }
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in pump.cancel() }
        }
    }

    // MARK: - Raw calls

    /// Makes a unary call with any request and returns the final frame (status OK).
    /// - Throws: the non-OK `Status` (INVALID_ARGUMENT locally, nothing sent, when `method`,
    ///   `metadata` or a string of `request` holds a NUL); `CancellationError` when the task is cancelled; a
    ///   DEADLINE_EXCEEDED `Status` when `timeout` passes without an answer.
    public func unary(
        method: String, request: some WireMessage, timeout: Duration? = nil, metadata: [MetadataEntry] = []
    ) async throws -> ResponseFrame {
        let metadata = callMetadata + metadata
        try Self.checkStrings(method: method, request: request, metadata: metadata)
        let callID = connection.makeCallID()
        let frame = RequestFrame(
            callID: callID, method: method, request: request, timeoutMilliseconds: timeout.map(Self.milliseconds) ?? 0,
            metadata: metadata)
        let connection = self.connection
        let deadline = timeout.map { Self.localDeadline(callID: callID, timeout: $0, connection: connection) }
        defer {
            deadline?.cancel()
            // A cancellation that arrived after the answer left a marker; drop it.
            connection.forgetEarlyCancel(callID: callID)
        }
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                connection.start(callID: callID, frame: frame, waiter: .unary(continuation))
            }
        } onCancel: {
            connection.abandon(callID: callID, error: CancellationError())
        }
        guard answer.status.code == .ok else { throw answer.status }
        return answer
    }

    /// Starts a server-streaming call; the stream yields every frame, the last with `end` set.
    /// A NUL in `method`, `metadata` or a string of `request` ends the stream at once with an
    /// INVALID_ARGUMENT `Status` (nothing sent).
    /// Dropping the stream or cancelling its consumer cancels the call.
    public func stream(
        method: String, request: some WireMessage, timeout: Duration? = nil, metadata: [MetadataEntry] = []
    ) -> AsyncThrowingStream<ResponseFrame, any Error> {
        let metadata = callMetadata + metadata
        do {
            try Self.checkStrings(method: method, request: request, metadata: metadata)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let callID = connection.makeCallID()
        let frame = RequestFrame(
            callID: callID, method: method, request: request, timeoutMilliseconds: timeout.map(Self.milliseconds) ?? 0,
            metadata: metadata)
        let connection = self.connection
        let (frames, continuation) = AsyncThrowingStream<ResponseFrame, any Error>.makeStream()
        let deadline = timeout.map { Self.localDeadline(callID: callID, timeout: $0, connection: connection) }
        continuation.onTermination = { termination in
            deadline?.cancel()
            if case .cancelled = termination { connection.abandon(callID: callID, error: CancellationError()) }
        }
        connection.start(callID: callID, frame: frame, waiter: .stream(continuation))
        return frames
    }

    // MARK: - Helpers

    /// Refuses a call whose strings cannot be sent as given (a NUL byte would be cut by the
    /// encoder, and the server refuses NUL bytes anyway).
    /// - Throws: `Status` INVALID_ARGUMENT "field: must not contain NUL bytes (not sent)".
    static func checkStrings(method: String, request: some WireMessage, metadata: [MetadataEntry]) throws(Status) {
        let envelope = RequestFrame(callID: 1, method: method, metadata: metadata)
        if let field = request.stringFieldWithNUL ?? envelope.stringFieldWithNUL {
            throw Status(code: .invalidArgument, message: "\(field): must not contain NUL bytes (not sent)")
        }
    }

    private static func localDeadline(callID: UInt64, timeout: Duration, connection: ClientConnection) -> Task<
        Void, Never
    > {
        Task {
            do {
                try await Task.sleep(for: timeout + localDeadlineMargin)
            } catch {
                return
            }
            connection.abandon(
                callID: callID,
                error: Status(
                    code: .deadlineExceeded, message: "deadline of \(milliseconds(timeout)) ms exceeded (client)"),
                beforeStart: false)
        }
    }

    static func milliseconds(_ duration: Duration) -> UInt32 {
        UInt32(clamping: max(0, duration.milliseconds))
    }

    private static func decode<M: WireMessage>(_ type: M.Type, _ frame: ResponseFrame) throws(Status) -> M {
        do throws(FrameError) {
            return try M(decoding: frame.message ?? [])
        } catch {
            throw Status(code: .internalError, message: "the server's answer does not decode: \(error.message)")
        }
    }
}
