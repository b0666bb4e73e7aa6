public import AdLoaderCore
public import AdLoaderLogging
public import AdLoaderWire

/// The one place that knows what a call of `adloader.v1.NativeAdLoader` means: takes a decoded
/// request, calls the loader, and answers through the transport's ``CallResponder``.
///
/// It owns what is about calls rather than bytes: deadlines, cancellation, parked borrows and
/// their limit, Watch filtering and the slow-watcher rule, the identifier-size limit, the
/// Stats size refusal, the drain, and the mapping of core and wire errors to ``Status``. A
/// transport owns framing, connections and their limits, and its table of call ids.
///
/// - Important: loop-confined: create it and call it on the loader's thread.
public final class AdLoaderService {
    public let loader: NativeAdvertisementLoader
    public let limits: ServerLimits
    /// Token auth, applied by every transport before ``handle(_:callID:timeout:responder:)``.
    /// Replaced by a reload (tokens added or removed): every later call is checked against the new one.
    @exclusivity(unchecked) public var authenticator: CallAuthenticator
    let clock: any AdClock
    let scheduler: any AdScheduler
    let logger: Logger
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks only cost time here.
    /// Borrows parked on the loader, all transports and connections together.
    @exclusivity(unchecked) public private(set) var parkedBorrowCount = 0
    /// Set by ``beginDrain()``: new calls are answered UNAVAILABLE.
    @exclusivity(unchecked) public private(set) var isDraining = false
    /// Parked borrows and watches, by serial (for the drain).
    @exclusivity(unchecked) private var openCalls: [UInt64: OpenCall] = [:]
    @exclusivity(unchecked) private var nextSerial: UInt64 = 1
    /// Told of every call's method, final status and start (metrics); nil for none. Set it
    /// before the first call.
    @exclusivity(unchecked) public var callObserver: (any CallObserver)?
    /// App-open decisions, their leases and counts (the core's); AppOpen and the Return of
    /// an app-open lease shown go to it.
    public let appOpen: AppOpenCoordinator
    /// App-open counts: read by AppOpen, moved by the Return of an app-open lease shown.
    public var capStore: any CapStore { appOpen.capStore }
    /// What AppOpen does when ``capStore`` fails.
    public var capStoreOutageMode: CapStoreOutageMode { appOpen.outageMode }
    /// Metadata every answer carries (gRPC: response headers of every call), set by the
    /// composition root before the first connection: the instance name under
    /// ``CallMetadata/instanceKey`` (`listeners.instanceName`, default the bound `host:port`),
    /// which Stats (`instance`) and ServerInfo (`instance_name`) also answer. Empty until then.
    @exclusivity(unchecked) public var responseMetadata = CallMetadata()
    /// The request metadata key whose value a call's answer carries back as response metadata
    /// (a proxy's or client's request id, for correlating logs); see ``handle(_:callID:timeout:metadata:responder:)``.
    public static let requestIDKey = "x-request-id"
    /// The build string ServerInfo reports; the composition root adds the commit to the configuration.
    public var build = BuildInfo.build
    /// The features ServerInfo lists as enabled (the daemon's: transports, auth, reload, ...);
    /// set before the first call.
    @exclusivity(unchecked) public var features: [String] = []
    /// When the service was created: ServerInfo's uptime counts from here.
    let startedAt: AdInstant
    /// Re-reads the configuration and applies it (the daemon's; see ``reload(callID:responder:)``);
    /// nil: Reload answers UNIMPLEMENTED. Set it before the first call.
    @exclusivity(unchecked) public var reloader: (() throws(ConfigError) -> ReconfigureResult)?

    /// - Parameters:
    ///   - loader: the loader every call goes to.
    ///   - limits: ``ServerLimits/maxParkedBorrows``, ``ServerLimits/maxIdentifierLength``,
    ///     ``ServerLimits/maxMessageSize`` (Stats answers) and
    ///     ``ServerLimits/maxUnsentOutputPerConnection`` (slow watchers) are used here.
    ///   - clock, scheduler: deadlines.
    ///   - capStore: app-open counts (AppOpen and the Return of its leases).
    ///   - capStoreOutageMode: what AppOpen does when the store fails.
    ///   - authenticator: which calls need a token (default: none).
    public init(
        loader: NativeAdvertisementLoader, limits: ServerLimits, clock: any AdClock, scheduler: any AdScheduler,
        logger: Logger, capStore: any CapStore = InMemoryCapStore(), capStoreOutageMode: CapStoreOutageMode = .refuse,
        authenticator: CallAuthenticator = CallAuthenticator()
    ) {
        self.appOpen = AppOpenCoordinator(loader: loader, capStore: capStore, outageMode: capStoreOutageMode)
        self.loader = loader
        self.limits = limits
        self.authenticator = authenticator
        self.clock = clock
        self.scheduler = scheduler
        self.logger = logger
        startedAt = clock.now
    }

    /// The serial the next open call gets.
    func takeSerial() -> UInt64 { nextSerial }

    /// The status refusing a call for its credentials, or nil to serve it (see
    /// ``CallAuthenticator``). Transports call it with the call's `authorization` metadata
    /// before ``handle(_:callID:timeout:responder:)``.
    public func authenticate(_ authorization: String?, peerIsLocal: Bool) -> Status? {
        authenticator.check(authorization, peerIsLocal: peerIsLocal)
    }

    /// Calls open now (parked borrows, watches, calls waiting for the cap store).
    public var openCallCount: Int { openCalls.count }

    /// The instance name, as ``responseMetadata`` carries it.
    private var instanceName: String { responseMetadata.value(for: CallMetadata.instanceKey) ?? "" }

    /// Handles one call.
    ///
    /// A call answered at once is answered through `responder` before this returns. A call
    /// that stays open — a Borrow that parked, a Watch — is returned; the transport keeps it
    /// by its call id until the service ends it (``CallResponder/openCallEnded(_:)``) or the
    /// transport does (``end(_:answering:)``).
    /// - Parameters:
    ///   - callID: the transport's id of the call, passed back to `responder`.
    ///   - timeout: the call's deadline from now; nil for none. Only open calls can exceed it.
    ///   - metadata: the call's request metadata (``CallMetadata``; empty for none). A
    ///     ``requestIDKey`` entry is answered back as response metadata
    ///     (``CallResponder/addResponseMetadata(_:_:)``) before anything else of the call.
    /// - Returns: the open call, or nil when the call was answered.
    public func handle(
        _ request: ServiceRequest, callID: UInt64, timeout: Duration?, metadata: CallMetadata = CallMetadata(),
        responder: any CallResponder
    ) -> OpenCall? {
        let startedAt = callObserver?.callStarted() ?? 0
        // Most calls carry no metadata: one count check, nothing built.
        if !metadata.isEmpty, let requestID = metadata.value(for: Self.requestIDKey) {
            var answered = CallMetadata()
            // One entry of a request's bounded metadata fits the same bounds.
            try? answered.append(key: Self.requestIDKey, value: requestID)
            responder.addResponseMetadata(callID, answered)
        }
        var code = Status.Code.ok
        let open = dispatch(request, callID: callID, timeout: timeout, responder: responder, code: &code)
        if let open {
            // Reported when it ends (``report(_:_:)``); nothing ends it before this returns.
            open.method = request.method
            open.startedAt = startedAt
        } else {
            callObserver?.callFinished(request.method, code: code, startedAt: startedAt)
        }
        return open
    }

    /// ``handle(_:callID:timeout:responder:)`` without the reporting; `code` is set to the
    /// final status of a call answered at once.
    private func dispatch(
        _ request: ServiceRequest, callID: UInt64, timeout: Duration?, responder: any CallResponder,
        code: inout Status.Code
    ) -> OpenCall? {
        do {
            if isDraining { throw Status(code: .unavailable, message: "server shutting down") }
            switch request {
            case .borrow(let message):
                return try borrow(message, callID: callID, timeout: timeout, responder: responder, code: &code)
            case .returnLease(let message):
                return try returnLease(message, callID: callID, timeout: timeout, responder: responder)
            case .prefetch(let message):
                try checkIdentifiers(["ad_unit_id": message.adUnitID, "loader": message.loader])
                let result = try loader.prefetch(
                    adUnitID: message.adUnitID, loader: loaderName(message.loader), count: Int(message.count),
                    privacy: try message.privacy?.signals())
                responder.answer(callID, .message(PrefetchResponseMessage(result: result)))
            case .stats(let message):
                try checkIdentifiers(["ad_unit_id": message.adUnitID, "loader": message.loader])
                try stats(message, callID: callID, responder: responder)
            case .watch(let message):
                try checkIdentifiers(["ad_unit_id": message.adUnitID, "loader": message.loader])
                return watch(message, callID: callID, timeout: timeout, responder: responder)
            case .appOpen(let message):
                return try appOpen(message, callID: callID, timeout: timeout, responder: responder)
            case .setLoaderEnabled(let message):
                try setLoaderEnabled(message, callID: callID, responder: responder)
            case .reload:
                try reload(callID: callID, responder: responder)
            case .serverInfo:
                responder.answer(callID, .message(serverInfo()))
            case .plan(let message):
                try plan(message, callID: callID, responder: responder)
            }
        } catch let error as any StatusConvertible {
            let status = error.status
            code = status.code
            responder.finish(callID, status: status)
        } catch {
            code = .internalError
            responder.finish(callID, status: Status(code: .internalError, message: "\(error)"))
        }
        return nil
    }

    /// Tells the ``callObserver`` that the transport refused a call before handing it over
    /// (its answer is the transport's): counted with the others in the metrics.
    /// - Parameters:
    ///   - method: the full gRPC method name the client sent.
    ///   - code: the status the transport answered.
    public func callRefused(method: String, code: Status.Code) {
        callObserver?.callRefused(ServiceMethod(fullName: method), code: code)
    }

    /// Ends an open call from the transport's side: the client cancelled it, reused its id or
    /// went away. A parked borrow is withdrawn (no ad is taken), a Watch unregistered.
    /// - Parameter status: the final answer to send, or nil to send none.
    /// - Returns: false when the call had already ended.
    @discardableResult
    public func end(_ call: OpenCall, answering status: Status?) -> Bool {
        guard close(call) else { return false }
        report(call, status?.code ?? .cancelled)
        if let status, let responder = call.responder { responder.finish(call.callID, status: status) }
        return true
    }

    /// How the drain stops the loader (the daemon suspends its pools into the pool store);
    /// nil: ``NativeAdvertisementLoader/shutdown()``.
    public var stopLoader: (() -> Void)?
    /// What the pool store gave back at start and its journal's work, for Stats; nil (the
    /// default) with the store off. Set by the composition root.
    public var poolStoreStats: (() -> PoolStoreStats)?

    /// Starts the drain: later calls are answered UNAVAILABLE, the loader shuts down (parked
    /// borrows are answered UNAVAILABLE), and every Watch ends with UNAVAILABLE.
    public func beginDrain() {
        guard !isDraining else { return }
        isDraining = true
        if let stopLoader { stopLoader() } else { loader.shutdown() }
        let unavailable = Status(code: .unavailable, message: "server shutting down")
        for serial in openCalls.keys.sorted() {
            if let call = openCalls[serial] { finishOpenCall(call, status: unavailable) }
        }
    }

    // MARK: Borrow

    private func borrow(
        _ message: BorrowRequestMessage, callID: UInt64, timeout: Duration?, responder: any CallResponder,
        code: inout Status.Code
    ) throws -> OpenCall? {
        // One call per field rather than checkIdentifiers' KeyValuePairs: building and destroying
        // that array was ~300 instructions per Borrow (callgrind). Same order, same errors.
        try checkIdentifier("ad_unit_id", message.adUnitID)
        try checkIdentifier("loader", message.loader)
        try checkIdentifier("slot_key", message.slot)
        let slot = message.slot.isEmpty ? nil : message.slot
        let loaderName = loaderName(message.loader)
        let privacy = try message.privacy?.signals()
        // At the parked-borrow limit, the borrow still takes an available ad; only a borrow
        // that would have parked is refused.
        let mayPark = parkedBorrowCount < limits.maxParkedBorrows
        let outcome: BorrowOutcome
        var call: OpenCall? = nil
        if message.waitMilliseconds == 0 {
            // Never parks: no open call to allocate.
            outcome = try loader.borrow(
                adUnitID: message.adUnitID, loader: loaderName, slot: slot, wait: .zero, mayPark: false,
                privacy: privacy, whenServed: { _ in })
        } else {
            let open = OpenCall(callID: callID, serial: nextSerial, responder: responder)
            call = open
            outcome = try loader.borrow(
                adUnitID: message.adUnitID, loader: loaderName, slot: slot,
                wait: .milliseconds(message.waitMilliseconds), mayPark: mayPark, privacy: privacy
            ) { [weak self] result in
                self?.parkedBorrowServed(open, result)
            }
        }
        switch consume outcome {
        case .answered(let result):
            code = answer(callID, result, responder: responder)
            return nil
        case .parkingRefused:
            throw Status(
                code: .resourceExhausted, message: "parked borrows: limit of \(limits.maxParkedBorrows) reached")
        case .parked(let parked):
            guard let call else { preconditionFailure("a borrow without a wait parked") }
            call.state = .parkedBorrow(parked)
            parkedBorrowCount += 1
            register(call, timeout: timeout)
            return call
        }
    }

    /// - Returns: the status code answered.
    @discardableResult
    private func answer(_ callID: UInt64, _ result: consuming BorrowResult, responder: any CallResponder) -> Status.Code
    {
        // The result is moved into the answer, not copied (its lease holds the slot and the ad).
        switch result {
        case .leased, .noAdYet:
            if let message = BorrowResponseMessage(result) { responder.answer(callID, .borrow(message)) }
            return .ok
        case .unavailable:
            let reason = isDraining ? "server shutting down" : "loader disabled (or removed by a reload)"
            responder.finish(callID, status: Status(code: .unavailable, message: reason))
            return .unavailable
        case .upstreamFailed(let error):
            responder.finish(
                callID, status: Status(code: .unavailable, message: "no ad can arrive: upstream \(error)"))
            return .unavailable
        }
    }

    private func parkedBorrowServed(_ call: OpenCall, _ result: BorrowResult) {
        guard close(call) else { return }
        guard let responder = call.responder, responder.isOpen else {
            // Nobody to tell: put the ad back rather than leave it leased until it times out.
            if case .leased(let lease, reused: false) = result { _ = try? loader.returnLease(lease.id, shown: false) }
            report(call, .cancelled)
            return
        }
        responder.openCallEnded(call)
        report(call, answer(call.callID, result, responder: responder))
    }

    // MARK: Stats

    private func stats(_ message: StatsRequestMessage, callID: UInt64, responder: any CallResponder) throws(Status) {
        // Filters that match nothing give an empty list (PROTOCOL.md 7.4).
        let pools = loader.stats(loader: nonEmpty(message.loader), adUnitID: nonEmpty(message.adUnitID))
        let answer = StatsResponseMessage(
            pools: pools, sources: loader.sourceStats(loader: nonEmpty(message.loader)),
            loaders: loader.loaderStates(loader: nonEmpty(message.loader)), instance: instanceName,
            feeds: loader.feedStats, poolStore: poolStoreStats?())
        // An answer above the message size would make clients with the same limit drop the
        // connection (PROTOCOL.md 8): size it before encoding, refuse it, let the client filter.
        // The transport says what its limit applies to (the framed envelope, the gRPC message).
        let size = responder.answerSize(callID, messageSize: answer.encodedSize ?? answer.encoded().count)
        let limit = limits.maxMessageSize
        if size > limit {
            throw Status(
                code: .resourceExhausted,
                message:
                    "stats answer of \(size) bytes exceeds the limit of \(limit) bytes; filter by loader or ad_unit_id")
        }
        responder.answer(callID, .message(answer))
    }

    // MARK: ServerInfo

    private func serverInfo() -> ServerInfoResponseMessage {
        let uptime = clock.now - startedAt
        return ServerInfoResponseMessage(
            version: BuildInfo.version, build: build, instance: instanceName,
            uptimeMilliseconds: UInt64(max(uptime.milliseconds, 0)), features: features.sorted())
    }

    // MARK: Watch

    /// Like Stats, filters that match nothing are not an error: such a Watch streams nothing.
    ///
    /// A Watch opens with the `restored` events of the pools the pool store gave back at this
    /// start (PROTOCOL.md 7.5): the restore ran before any call was served, so no Watch could
    /// have seen them live. They are streamed here, before any live event, without the
    /// slow-watcher check (one per pool at most, and the call is not the transport's yet).
    private func watch(
        _ message: WatchRequestMessage, callID: UInt64, timeout: Duration?, responder: any CallResponder
    ) -> OpenCall {
        let call = OpenCall(callID: callID, serial: nextSerial, responder: responder)
        let kinds = Set(message.kinds)
        let loaderFilter = message.loader
        let adUnitFilter = message.adUnitID
        let token = loader.addObserver { [weak self, unowned call] event in
            guard kinds.isEmpty || kinds.contains(event.kind),
                loaderFilter.isEmpty || event.loader == loaderFilter,
                adUnitFilter.isEmpty || event.adUnitID == adUnitFilter
            else { return }
            self?.watchEvent(call, event)
        }
        call.state = .watch(token)
        register(call, timeout: timeout)
        if kinds.isEmpty || kinds.contains(.restored) {
            for event in loader.restorations(loader: loaderFilter, adUnitID: adUnitFilter) where responder.isOpen {
                responder.stream(callID, EventMessage(event: event))
            }
        }
        return call
    }

    /// Streams one event, unless the client reads too slowly: then the Watch ends with
    /// RESOURCE_EXHAUSTED (PROTOCOL.md 8) instead of growing the output without bound.
    private func watchEvent(_ call: OpenCall, _ event: AdEvent) {
        guard let responder = call.responder, responder.isOpen else { return }
        let limit = limits.maxUnsentOutputPerConnection
        if responder.unsentByteCount > limit {
            logger.warning("watch ended: client reads too slowly", ["call": .int(Int64(call.callID))])
            finishOpenCall(
                call,
                status: Status(
                    code: .resourceExhausted,
                    message: "unsent output: limit of \(limit) bytes reached; the client reads too slowly"))
            return
        }
        responder.stream(call.callID, EventMessage(event: event))
    }

    // MARK: Open calls

    func register(_ call: OpenCall, timeout: Duration?) {
        openCalls[call.serial] = call
        nextSerial += 1
        guard let timeout, timeout > .zero else { return }
        call.deadline = scheduler.schedule(at: clock.now + timeout) { [weak self, weak call] in
            guard let self, let call else { return }
            self.finishOpenCall(
                call,
                status: Status(code: .deadlineExceeded, message: "deadline of \(timeout.milliseconds) ms exceeded"))
        }
    }

    /// Ends an open call from the service's side and answers it with `status`.
    private func finishOpenCall(_ call: OpenCall, status: Status) {
        guard close(call) else { return }
        report(call, status.code)
        guard let responder = call.responder else { return }
        responder.openCallEnded(call)
        if responder.isOpen { responder.finish(call.callID, status: status) }
    }

    /// Withdraws an open call; false when it had already ended.
    func close(_ call: OpenCall) -> Bool {
        switch call.state {
        case .ended, .starting:
            return false
        case .parkedBorrow(let parked):
            parked.cancel()
            parkedBorrowCount -= 1
        case .watch(let token):
            loader.removeObserver(token)
        case .storePending:
            // The store's call completes anyway; its completion finds the call ended.
            break
        }
        call.state = .ended
        call.deadline?.cancel()
        call.deadline = nil
        openCalls[call.serial] = nil
        return true
    }

    /// Tells the observer how an open call ended.
    private func report(_ call: OpenCall, _ code: Status.Code) {
        callObserver?.callFinished(call.method, code: code, startedAt: call.startedAt)
    }

    // MARK: Helpers

    /// R1: a client must not make the daemon hold (and send upstream) arbitrarily long ids.
    func checkIdentifiers(_ fields: KeyValuePairs<String, String>) throws(LoaderError) {
        for (field, value) in fields { try checkIdentifier(field, value) }
    }

    @inline(__always)
    func checkIdentifier(_ field: String, _ value: String) throws(LoaderError) {
        let limit = limits.maxIdentifierLength
        if value.utf8.count > limit {
            throw LoaderError(
                code: .invalidArgument, field: field, message: "must be at most \(limit) bytes, got \(value.utf8.count)"
            )
        }
    }

    func loaderName(_ name: String) -> String { name.isEmpty ? LoaderConfiguration.defaultName : name }

    func nonEmpty(_ value: String) -> String? { value.isEmpty ? nil : value }
}
