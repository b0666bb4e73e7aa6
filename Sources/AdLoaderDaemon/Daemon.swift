import AdLoaderAdmin
import AdLoaderBuild
public import AdLoaderCore
public import AdLoaderFramed
import AdLoaderGRPC
public import AdLoaderLogging
import AdLoaderOperations
import AdLoaderService
import AdLoaderTLS
import AdLoaderUV
import AdLoaderWire
import AdStores

#if canImport(Glibc)
    import Glibc
#endif

/// The composition root: the only place that knows every concrete part. It builds the loop,
/// clock, demand sources, loader, service, the two transports (framed and gRPC), the
/// protocol sniffer that hands each connection to one of them by its first bytes, and the
/// listeners from the configuration, starts them in that order and stops them in reverse.
///
/// Lifecycle: ``init(configuration:logger:)`` builds, ``start()`` binds the listeners and
/// installs the signal handlers, ``run()`` serves until SIGTERM/SIGINT (or
/// ``beginShutdown(reason:)``), then drains: stop accepting, announce the shutdown on every
/// gRPC connection and wait (briefly) until each client read it, then the service ends parked
/// borrows and watches with UNAVAILABLE, the transports announce the shutdown on every
/// connection and close each when its client does (all of them when the grace period ends); then every part
/// stops in reverse order and the loop closes, within a bound (handles nobody closed are
/// closed, logged, and make the exit status 1).
///
/// - Important: loop-confined: create it, start and run it on one thread.
public final class Daemon {
    private enum State { case created, running, draining, stopped }

    /// The running configuration: as started, then as the last accepted reload gave it.
    public private(set) var configuration: ServerConfiguration
    /// Whether the app-open cap store was opened at start (a loader of format appOpen): a
    /// reload cannot add the first one to a daemon without it.
    private let capStoreOpened: Bool
    /// Reads the configuration again for a reload (SIGHUP, the Reload call): the file and
    /// the layering the daemon started with. nil: a reload is refused.
    public var configurationSource: (() throws(ConfigError) -> ServerConfiguration)?
    let logger: Logger
    let loop: UVLoop
    let clock: LoopClock
    let loader: NativeAdvertisementLoader
    let service: AdLoaderService
    let transport: FramedTransport
    /// Every metric, the readiness rule and the dashboard's history (read by the admin routes).
    let metrics: DaemonMetrics
    let history: DashboardHistory
    /// Logs readiness changes with their reasons (checked after every source answer).
    let readinessLog: ReadinessLog
    /// Logs pools held back by a cap and ads arriving too short to be lent.
    let capWarnings: CapWarnings
    private var admin: AdminServer?
    private var sampleTimer: UVTimer?
    /// App-open counts; in memory (and unused) unless a loader has format appOpen.
    let capStore: any CapStore
    /// Wakes the loop for a cap store on a worker thread; closed after the store.
    let capStoreWakeup: UVAsync
    let grpcTransport: GRPCTransport
    /// What the transports share (connections, admission, response metadata, ad encodings).
    let server: ServerContext
    /// Every transport, in the order they are announced and drained.
    let transports: [any ServerTransport]
    private var shutdown: ShutdownSequence?
    /// Both transports share each listener: this tells their connections apart.
    let sniffer: ProtocolSniffer
    /// The TLS handshakes in front of the sniffer on the TCP listener; nil when TLS is off.
    let tlsAcceptor: TLSAcceptor?
    /// Built sources' stops (their HTTP clients' handles), run after the loader's shutdown.
    let sourceContext: DemandSourceContext
    /// What a restart keeps (the notice outbox); nil with `poolStore.type` off.
    let poolStore: (any PoolStore)?
    /// Keeps a second daemon off the pool store's file (SQLite); released after the store's close.
    private let poolStoreLock: PoolStoreLock?
    /// The pool store's journal (write-through, for a crash); nil with the store off.
    private var journaling: PoolJournaling?
    /// What the start restored (Stats' `pool_store`, with the journal's counters added).
    private var restored = PoolStoreStats()
    private let journalDeferred: UVDeferredWork?
    /// Wakes the loop when the journal's compaction thread is done; closed after the journal.
    private let journalWakeup: UVAsync?
    private var listeners: [FramedListener] = []
    private var signals: [UVSignal] = []
    /// How to stop each part started so far, in start order; run in reverse.
    private var stops: [(part: String, stop: () -> Void)] = []
    private var state = State.created
    private var loaderStopped = false

    /// Builds the loop, clock, demand sources, loader, service and transport.
    /// - Throws: ``ConfigError`` for a bad loader or source; ``UVError`` when libuv fails.
    public init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        loop = try UVLoop()
        // Locals until everything is built, so a failure can close what exists.
        var createdClock: LoopClock?
        var createdDeferred: UVDeferredWork?
        var createdWakeup: UVAsync?
        var createdGRPCDeferred: UVDeferredWork?
        var createdContext: DemandSourceContext?
        do {
            let clock = try LoopClock(loop: loop)
            createdClock = clock
            let deferred = try UVDeferredWork(loop: loop)
            createdDeferred = deferred
            let (poolStoreLock, poolStore) = try Self.openPoolStore(configuration, clock: clock, logger: logger)
            self.poolStoreLock = poolStoreLock
            self.poolStore = poolStore
            let context = DemandSourceContext(
                clock: clock, scheduler: clock, loop: loop, logger: logger, noticeStore: poolStore)
            createdContext = context
            // Each source is measured from the outside (requests, latency, failures by class,
            // notices, reachability): the core keeps no metrics of its own.
            var sources: [String: any DemandSource] = [:]
            var measured: [MeasuredDemandSource] = []
            for (name, settings) in configuration.sources {
                context.sourceName = name
                let source = MeasuredDemandSource(name: name, wrapping: try settings.makeSource(context: context))
                measured.append(source)
                sources[name] = source
            }
            let loader = try NativeAdvertisementLoader(
                loaders: configuration.loaders, sources: sources,
                budgets: configuration.sources.compactMapValues(\.common.budget), clock: clock, scheduler: clock,
                idSeed: UInt64(clock.now.unixMilliseconds))
            loader.maximumAds = configuration.limits.maximumAds
            let capWarnings = CapWarnings(logger: logger, clock: clock)
            capWarnings.attach(to: loader)
            self.capWarnings = capWarnings
            // The store is opened only when AppOpen can be called: no file for a feed-only daemon.
            let needsStore = configuration.loaders.contains { $0.format == .appOpen }
            // A store on a worker thread wakes the loop through this handle to run its completions.
            let wakeup = try UVAsync(loop: loop)
            createdWakeup = wakeup
            let sender = wakeup.sender
            let openedStore: any CapStore =
                needsStore
                ? try configuration.capStore.makeStore(loop: loop, wake: { sender.send() }) : InMemoryCapStore()
            if let background = openedStore as? BackgroundCapStore {
                wakeup.setAction { [weak background] in background?.drainCompletions() }
            }
            // Measured from the outside (operations, up/down), and its outages logged once each.
            let capStore = MeasuredCapStore(
                kind: needsStore ? configuration.capStore.type.rawValue : "none", wrapping: openedStore)
            let storeKind = capStore.kind
            let outageMode = configuration.capStore.outage.name
            capStore.onChange = { [logger] up, error in
                if up {
                    logger.info("cap store answers again", ["store": .string(storeKind)])
                } else {
                    logger.warning(
                        "cap store down: app-open counts unavailable",
                        [
                            "store": .string(storeKind), "error": .string(error?.message ?? ""),
                            "outage": .string(outageMode),
                        ])
                }
            }
            self.capStoreWakeup = wakeup
            let service = AdLoaderService(
                loader: loader, limits: configuration.limits, clock: clock, scheduler: clock, logger: logger,
                capStore: capStore, capStoreOutageMode: configuration.capStore.outage,
                authenticator: CallAuthenticator(
                    named: try configuration.auth.resolvedTokens(),
                    requireOnLoopback: configuration.auth.requireOnLoopback))
            self.capStore = capStore
            capStoreOpened = needsStore
            // One server: one connection set and limit, one admission step, one encoded-ad
            // cache for every transport.
            let server = ServerContext(service: service, limits: configuration.limits)
            self.server = server
            transport = FramedTransport(
                server: server, clock: clock, scheduler: clock, deferred: deferred, logger: logger)
            let grpcDeferred = try UVDeferredWork(loop: loop)
            createdGRPCDeferred = grpcDeferred
            grpcTransport = GRPCTransport(
                server: server, http2Limits: configuration.http2Limits, clock: clock, scheduler: clock,
                deferred: grpcDeferred, logger: logger)
            // Every transport, in shutdown order; a new one is one more entry here and a
            // route in the sniffer when it shares the port.
            transports = [transport, grpcTransport]
            sniffer = ProtocolSniffer(
                routes: [.init(preface: ProtocolSniffer.http2Preface, acceptor: grpcTransport)], fallback: transport,
                clock: clock, scheduler: clock, timeout: configuration.limits.partialFrameTimeout,
                maxPending: configuration.limits.maxConnections, logger: logger)
            tlsAcceptor =
                try configuration.tls.isEnabled
                ? TLSAcceptor(
                    context: Self.makeTLSContext(configuration.tls), next: sniffer, clock: clock, scheduler: clock,
                    handshakeTimeout: configuration.tls.handshakeTimeout,
                    maxPending: configuration.limits.maxConnections,
                    logger: logger)
                : nil
            // The write-through journal is the SQLite store's (a file next to it).
            if let poolStore = poolStore as? SQLitePoolStore {
                let deferred = try UVDeferredWork(loop: loop)
                journalDeferred = deferred
                let wakeup = try UVAsync(loop: loop)
                journalWakeup = wakeup
                let sender = wakeup.sender
                let journaling = PoolJournaling(
                    journal: PoolJournal(
                        path: poolStore.path + ".journal",
                        compactionBytes: configuration.poolStore.journalCompactionSize, now: { clock.now },
                        wake: { sender.send() }),
                    loader: loader, server: server, store: poolStore, deferred: deferred, logger: logger)
                wakeup.setAction { [weak journaling] in journaling?.compactionFinished() }
                self.journaling = journaling
            } else {
                journalDeferred = nil
                journalWakeup = nil
            }
            self.clock = clock
            self.sourceContext = context
            self.loader = loader
            self.service = service

            let metrics = DaemonMetrics(
                loader: loader, service: service, server: server, transports: transports, sources: measured,
                capStore: capStore, tls: tlsAcceptor,
                configuration: configuration, startedAtUnixSeconds: Double(clock.now.unixMilliseconds) / 1000)
            self.metrics = metrics
            // Timing every call costs two clock reads and a histogram update: only when
            // something can read the metrics (the admin listener is on).
            if configuration.admin.port != 0 { service.callObserver = metrics.calls }
            let sourceLog = DemandSourceLog(logger: logger, clock: clock, interval: configuration.logWarningInterval)
            let readinessLog = ReadinessLog(logger: logger) { [unowned metrics] in metrics.readiness }
            self.readinessLog = readinessLog
            for source in measured {
                let name = source.name
                source.onAnswer = { [weak readinessLog] result, asked in
                    sourceLog.record(source: name, result: result, asked: asked)
                    readinessLog?.check()
                }
            }
            history = DashboardHistory(metrics: metrics, configuration: configuration)
            service.reloader = { [weak self] () throws(ConfigError) -> ReconfigureResult in
                guard let self else { throw ConfigError(field: "reload", message: "the server is shutting down") }
                return try self.reload(trigger: "Reload call")
            }
        } catch {
            _ = Self.abandon(
                loop,
                closing: [
                    createdContext?.stopSources, createdClock?.close, createdDeferred?.close,
                    createdGRPCDeferred?.close,
                    createdWakeup?.close,
                ]
                .compactMap { $0 })
            throw error
        }
    }

    /// Locks, then opens the pool store; a file that cannot be used is moved aside with one log line.
    /// - Throws: ``ConfigError`` (`poolStore.sqlitePath`) when another daemon holds the store
    ///   (naming its pid) or not even a new file can be made; (`poolStore.type`) when the Redis
    ///   store cannot be read.
    private static func openPoolStore(
        _ configuration: ServerConfiguration, clock: any AdClock, logger: Logger
    ) throws(ConfigError) -> (PoolStoreLock?, (any PoolStore)?) {
        let settings = configuration.poolStore
        if settings.type == .redis { return (nil, try openRedisPoolStore(configuration, logger: logger)) }
        guard settings.type == .sqlite else { return (nil, nil) }
        do {
            // Before the file is touched: a store in use is neither moved aside nor restored twice.
            let lock = try PoolStoreLock(storePath: settings.sqlitePath)
            let (store, unusable) = try SQLitePoolStore.open(path: settings.sqlitePath, now: clock.now)
            if let unusable {
                logger.error(
                    "pool store unusable, starting empty",
                    ["path": .string(settings.sqlitePath), "error": .string(unusable.message)])
            }
            var lastLogged: Int64?
            store.onWriteFailure = { [logger] error in
                // A failing disk would log on every write: at most one line a minute.
                let now = clock.now.unixMilliseconds
                if let last = lastLogged, now - last < 60_000 { return }
                lastLogged = now
                logger.error(
                    "pool store write failed", ["path": .string(settings.sqlitePath), "error": .string(error.message)])
            }
            logger.info(
                "pool store open", ["path": .string(settings.sqlitePath), "notices": .int(Int64(store.noticeCount()))])
            return (lock, store)
        } catch {
            throw ConfigError(field: "poolStore.sqlitePath", message: error.message)
        }
    }

    /// The Redis pool store, keyed by the instance name as configured (`listeners.instanceName`,
    /// else `host:port`: a fixed port is needed, the name of port 0 is not known before binding).
    /// - Throws: ``ConfigError`` when the name is unknown, the credentials or the TLS files cannot
    ///   be read, or Redis cannot be reached or read (the daemon does not start without its pools' store).
    private static func openRedisPoolStore(
        _ configuration: ServerConfiguration, logger: Logger
    ) throws(ConfigError) -> RedisPoolStore {
        let listeners = configuration.listeners
        guard
            let instance = listeners.instanceName ?? (listeners.port != 0 ? "\(listeners.host):\(listeners.port)" : nil)
        else {
            throw ConfigError(
                field: "poolStore.type",
                message: "redis keys the pools by instance name: set listeners.instanceName or a fixed listeners.port")
        }
        let cap = configuration.capStore
        let credentials: RedisCredentials?
        do {
            credentials = try cap.redisCredentials()
        } catch {
            throw ConfigError(field: "capStore.redisPasswordFile", message: error.message)
        }
        let tls = try cap.redisTLSContext()
        do {
            let store = try RedisPoolStore(
                host: cap.redisHost, port: cap.redisPort,
                key: "\(configuration.poolStore.redisKeyPrefix):{\(instance)}",
                timeout: configuration.poolStore.redisTimeout, credentials: credentials, tls: tls)
            logger.info(
                "pool store open", ["location": .string(store.location), "notices": .int(Int64(store.noticeCount()))])
            return store
        } catch {
            throw ConfigError(field: "poolStore.type", message: error.message)
        }
    }

    /// Puts back what the last run left, before any call is served, and starts the journal:
    /// the suspension of a clean stop, else the journal of a crash; one log line says what came
    /// back (an unreadable one: what failed). The journal's first checkpoint holds what was
    /// restored, and is written before the suspension is deleted: a crash at any point of the
    /// start finds one of them whole.
    /// - Returns: what came back, for Stats.
    private static func restorePools(
        into loader: NativeAdvertisementLoader, from store: any PoolStore, journaling: PoolJournaling?,
        clock: any AdClock, logger: Logger
    ) -> PoolStoreStats {
        let started = Self.monotonicMilliseconds()
        var suspended = false
        var restored = PoolStoreStats()
        func account(_ result: PoolRestoreResult, from snapshots: [PoolSnapshot], source: String, downMs: Int64) {
            let total = snapshots.reduce(0) { $0 + $1.ads.count + $1.leases.count }
            restored.restoredFrom = source
            restored.restoredAds = UInt64(result.ads + result.leases)
            restored.restoredLeases = UInt64(result.leases)
            restored.expiredWhileDown = UInt64(result.expired)
            restored.reclaimedLeases = UInt64(result.reclaimed)
            // Every ad of the snapshots not back and not expired: removed, duplicates, skipped pools.
            restored.droppedAds = UInt64(max(0, total - result.ads - result.leases - result.expired))
            restored.downMilliseconds = downMs
            restored.restoreMilliseconds = Self.monotonicMilliseconds() - started
        }
        do {
            if let snapshots = try store.loadSuspension() {
                suspended = true
                let result = loader.restoreSuspension(snapshots)
                let takenAt = snapshots.map(\.takenAt.unixMilliseconds).max() ?? clock.now.unixMilliseconds
                let downMs = clock.now.unixMilliseconds - takenAt
                account(result, from: snapshots, source: "suspension", downMs: downMs)
                log(result, "pools restored from the pool store", downMs: downMs, started: started, logger: logger)
            }
        } catch {
            logger.error("pool store: suspended pools unreadable, starting empty", ["error": .string(error.message)])
        }
        if let journaling {
            let path = journaling.journal.path
            if !suspended {
                do {
                    if let replay = try PoolJournal.read(path: path) {
                        // A renewal after the last write is not journaled: no lease ends before
                        // a whole timeout from now.
                        let longest = loader.configurations.values.map(\.leaseTimeout).max() ?? .zero
                        let snapshots = replay.snapshots(leasesEndNoEarlierThan: clock.now + longest)
                        let result = loader.restoreSuspension(snapshots, from: .journal)
                        let writtenAt = replay.lastWrittenAt?.unixMilliseconds ?? clock.now.unixMilliseconds
                        let downMs = clock.now.unixMilliseconds - writtenAt
                        account(result, from: snapshots, source: "journal", downMs: downMs)
                        restored.uncertainAds = UInt64(replay.unreadableAds)
                        log(
                            result, "pools recovered from the pool journal (the last run did not stop cleanly)",
                            downMs: downMs, started: started, logger: logger, replay: replay)
                    }
                } catch {
                    logger.error("pool journal unreadable, starting empty", ["error": .string(error.message)])
                }
            }
            do {
                try journaling.journal.checkpoint(loader.snapshot())
            } catch {
                logger.error(
                    "pool journal cannot be written: pools are not crash-safe", ["error": .string(error.message)])
            }
            journaling.attach()
        }
        if suspended {
            do {
                try store.deleteSuspension()
            } catch {
                logger.error("pool store: the suspension cannot be deleted", ["error": .string(error.message)])
            }
        }
        return restored
    }

    /// Stats' `pool_store`: what the start restored, and the journal's and store's work since.
    private func poolStoreStats() -> PoolStoreStats {
        var stats = restored
        if let journal = journaling?.journal {
            stats.journalBytes = UInt64(journal.fileBytes)
            stats.journalCommits = journal.commits
            stats.journalCheckpoints = journal.checkpoints
            stats.writeFailures = journal.writeFailures
        }
        stats.writeFailures += (poolStore as? SQLitePoolStore)?.writeFailures ?? 0
        return stats
    }

    private static func log(
        _ result: PoolRestoreResult, _ message: String, downMs: Int64, started: Int64, logger: Logger,
        replay: PoolJournalReplay? = nil
    ) {
        let elapsed = Self.monotonicMilliseconds() - started
        if let replay {
            logger.warning(
                message,
                [
                    "pools": .int(Int64(result.pools)), "ads": .int(Int64(result.ads)),
                    "leases": .int(Int64(result.leases)), "expired": .int(Int64(result.expired)),
                    "reclaimedLeases": .int(Int64(result.reclaimed)), "removed": .int(Int64(result.removed)),
                    "skippedPools": .int(Int64(result.skipped.count)), "downMs": .int(downMs), "ms": .int(elapsed),
                    "journalAds": .int(Int64(replay.adCount)), "journalLeases": .int(Int64(replay.leaseCount)),
                    "frames": .int(Int64(replay.frames)), "cutBytes": .int(Int64(replay.cutBytes)),
                    "uncertainAds": .int(Int64(replay.unreadableAds)),
                    "unknownRecords": .int(Int64(replay.unknownRecords)),
                ])
        } else {
            logger.info(
                message,
                [
                    "pools": .int(Int64(result.pools)), "ads": .int(Int64(result.ads)),
                    "leases": .int(Int64(result.leases)), "expired": .int(Int64(result.expired)),
                    "reclaimedLeases": .int(Int64(result.reclaimed)), "removed": .int(Int64(result.removed)),
                    "skippedPools": .int(Int64(result.skipped.count)), "downMs": .int(downMs), "ms": .int(elapsed),
                ])
        }
        for skipped in result.skipped {
            logger.warning(
                "suspended pool not restored",
                [
                    "loader": .string(skipped.loader), "adUnitID": .string(skipped.adUnitID),
                    "reason": .string(skipped.reason),
                ])
        }
    }

    static func monotonicMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }

    /// The calling thread's CPU time (user and system), in µs: what the loop spent itself on a
    /// step, apart from the time it waited or was preempted.
    static func threadCPUMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }

    /// The calling thread's context switches so far: voluntary (it blocked in the kernel) and
    /// involuntary (it was preempted). `getrusage(RUSAGE_THREAD)`, 1 in Linux's headers (not
    /// imported without `_GNU_SOURCE`).
    static func threadContextSwitches() -> (voluntary: Int64, involuntary: Int64) {
        var usage = rusage()
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return (0, 0) }
        return (Int64(usage.ru_nvcsw), Int64(usage.ru_nivcsw))
    }

    static func monotonicMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// The loader's stop: with a pool store its pools are suspended into it (no loss notice
    /// for an ad kept), else shut down (every ad dropped).
    private func stopLoader() {
        // Called by the service's drain, and again as the loader's stop: once.
        guard !loaderStopped else { return }
        loaderStopped = true
        guard let poolStore else {
            loader.shutdown()
            return
        }
        let started = Self.monotonicMilliseconds()
        // The suspension replaces the journal: the shutdown's own removals are not journaled.
        journaling?.detach()
        let snapshots = loader.suspend()
        let leases = snapshots.reduce(0) { $0 + $1.leases.count }
        let ads = snapshots.reduce(0) { $0 + $1.ads.count } + leases
        do {
            let bytes = try poolStore.saveSuspension(snapshots)
            // Committed: the journal is older now (a crash before this line leaves both, and the
            // next start takes the suspension).
            journaling?.journal.remove()
            logger.info(
                "pools suspended into the pool store",
                [
                    "pools": .int(Int64(snapshots.count)), "ads": .int(Int64(ads)), "leases": .int(Int64(leases)),
                    "bytes": .int(Int64(bytes)), "ms": .int(Self.monotonicMilliseconds() - started),
                ])
        } catch {
            logger.error(
                "pool store: suspending the pools failed, their ads are lost",
                ["ads": .int(Int64(ads)), "error": .string(error.message)])
        }
    }

    /// The addresses bound by ``start()``.
    public var addresses: [ListenAddress] { listeners.map(\.address) }

    /// The admin listener's bound address; nil when it is off (`admin.port` 0).
    public var adminAddress: ListenAddress? { admin.map { .tcp(host: $0.host, port: $0.port) } }

    /// Starts every part in order — clock, sources, loader, service and transport, listeners, signal
    /// handlers — recording how to stop each.
    /// - Returns: the bound addresses (with the real port when port 0 was asked for).
    /// - Throws: ``ListenerError`` naming the setting of the listener that failed.
    @discardableResult
    public func start() throws(ListenerError) -> [ListenAddress] {
        precondition(state == .created)
        // Inherited masks (test runners, some supervisors) would swallow SIGTERM/SIGINT;
        // a peer that resets must not kill the daemon with SIGPIPE.
        UVSignal.unblockTerminationSignals()
        signal(SIGPIPE, SIG_IGN)
        stops.append(("clock", clock.close))
        // After the sources (stopped before it): their undelivered notices are in it by then.
        if let poolStore {
            stops.append(
                (
                    "pool store",
                    { [poolStoreLock] in
                        poolStore.close()
                        poolStoreLock?.release()
                    }
                ))
        }
        if let journalDeferred {
            stops.append(
                (
                    "pool journal",
                    { [unowned self] in
                        self.journaling?.detach()
                        // Joins a compaction's thread, the last that may wake the loop for it.
                        self.journaling?.journal.close()
                        journalDeferred.close()
                        self.journalWakeup?.close()
                    }
                ))
        }
        stops.append(("sources", sourceContext.stopSources))
        // Readiness (the log's, /readyz's) follows the daemon's state, admin listener or not.
        metrics.isServing = { [unowned self] in self.state == .running }
        metrics.isDraining = { [unowned self] in self.state == .draining }
        // The store first (it joins its worker, the last thread that may wake), then the handle.
        stops.append(("cap store wake-up", capStoreWakeup.close))
        stops.append(("cap store", capStore.close))
        // The drain stops the loader first (suspending its pools); this stop is for a start
        // that failed before any drain.
        service.stopLoader = { [unowned self] in self.stopLoader() }
        stops.append(("loader", { [unowned self] in self.stopLoader() }))
        for transport in transports { stops.append(("\(transport.name) transport", transport.stop)) }
        stops.append(("sniffer", sniffer.closeAll))
        if let tlsAcceptor { stops.append(("TLS handshakes", tlsAcceptor.closeAll)) }
        // The TCP listener speaks TLS when it is on; the Unix socket (local) stays cleartext.
        let tcpAcceptor: any ByteStreamAcceptor = tlsAcceptor ?? sniffer
        let settings = configuration.listeners
        do throws(ListenerError) {
            let tcpAddress = ListenAddress.tcp(host: settings.host, port: settings.port)
            do {
                listeners.append(
                    try FramedListener.tcp(
                        loop: loop, host: settings.host, port: settings.port, transport: tcpAcceptor, logger: logger))
            } catch {
                throw ListenerError(setting: "listeners.port", address: tcpAddress, error: error)
            }
            if let path = settings.unixSocket {
                do {
                    listeners.append(
                        try FramedListener.unix(
                            loop: loop, path: path, mode: settings.unixSocketMode, transport: sniffer, logger: logger))
                } catch {
                    throw ListenerError(setting: "listeners.unixSocket", address: .unix(path: path), error: error)
                }
            }
            stops.append(("listeners", { [unowned self] in self.closeListeners() }))
            // The admin listener stops last of the listeners (after the drain), so that
            // /readyz answers 503 "draining" while calls drain.
            try startAdmin()
            for number in [SIGTERM, SIGINT, SIGHUP] {
                let handle: UVSignal
                do {
                    handle = try UVSignal(loop: loop)
                    signals.append(handle)
                    try handle.start(number) { [unowned self] number in self.signalReceived(number) }
                } catch {
                    // Not a listener, but as fatal at start; reported against the process.
                    throw ListenerError(setting: "signals", address: tcpAddress, error: error)
                }
            }
            stops.append(("signals", { [unowned self] in self.closeSignals() }))
        } catch {
            closeAdmin()
            closeListeners()
            closeSignals()
            stopParts()
            state = .stopped
            throw error
        }
        state = .running
        readinessLog.baseline()
        service.features = features
        service.build = BuildCommit.build(configuration: BuildInfo.build)
        metrics.commit = BuildCommit.hash
        let instanceName = configuration.listeners.instanceName ?? addresses.first?.description ?? ""
        if !instanceName.isEmpty {
            // listeners.instanceName is at most 255 bytes: within CallMetadata's bounds.
            service.responseMetadata = (try? CallMetadata([(CallMetadata.instanceKey, instanceName)])) ?? CallMetadata()
        }
        history.instance = instanceName
        history.version = BuildInfo.version
        // Before the loop runs: no lease is lent yet.
        loader.leaseReplica = configuration.listeners.replicaIndex ?? LeaseReplica.index(forInstance: instanceName)
        logger.info("lease ids carry replica \(loader.leaseReplica)", ["instance": .string(instanceName)])
        // Before the loop runs, after the replica is set: no call is served yet.
        if let poolStore {
            restored = Self.restorePools(
                into: loader, from: poolStore, journaling: journaling, clock: clock, logger: logger)
            service.poolStoreStats = { [unowned self] in self.poolStoreStats() }
        }
        for address in addresses {
            logger.info("listening", ["address": .string(address.description)])
        }
        if let adminAddress { logger.info("admin listening", ["address": .string("http://\(adminAddress)/")]) }
        return addresses
    }

    /// What ServerInfo lists as enabled: the transports and the options that change what a
    /// client may do.
    private var features: [String] {
        var features = transports.map(\.name)
        if configuration.auth.hasTokens { features.append("auth") }
        if configuration.tls.isEnabled { features.append("tls") }
        if configuration.tls.clientAuth != .none { features.append("mtls") }
        if configurationSource != nil { features.append("reload") }
        if configuration.admin.port != 0 { features.append("admin") }
        if configuration.listeners.unixSocket != nil { features.append("unix-socket") }
        if configuration.loaders.contains(where: { $0.format == .appOpen }) { features.append("app-open") }
        return features.sorted()
    }

    private func startAdmin() throws(ListenerError) {
        let settings = configuration.admin
        guard settings.port != 0 else { return }
        let address = ListenAddress.tcp(host: settings.host, port: settings.port)
        // Beyond loopback, the admin listener needs a token (validation refused it without
        // tokens unless --insecure).
        let needsToken = !ServerConfiguration.isLoopback(settings.host) && configuration.auth.hasTokens
        let service = self.service
        let authenticator: (() -> CallAuthenticator)? = needsToken ? { service.authenticator } : nil
        let routes = AdminRoutes(metrics: metrics, history: history, authenticator: authenticator) { [clock] in
            clock.now.unixMilliseconds
        }
        do throws(UVError) {
            admin = try AdminServer(
                loop: loop, host: settings.host, port: settings.port, limits: settings.limits, clock: clock,
                scheduler: clock, logger: logger, handler: routes.respond(to:))
            try metrics.startLoopLagTimer(loop: loop)
            let timer = try UVTimer(loop: loop)
            timer.unref()
            sampleTimer = timer
        } catch {
            throw ListenerError(setting: "admin.port", address: address, error: error)
        }
        metrics.adminConnectionCount = { [unowned self] in self.admin?.connectionCount ?? 0 }
        history.listening = addresses.map(\.description) + adminAddress.map { ["admin http://\($0)/"] }!
        history.sample(unixMilliseconds: clock.now.unixMilliseconds)
        let interval = UInt64(max(settings.sampleInterval.milliseconds, 1))
        sampleTimer?.start(timeout: interval, repeat: interval) { [unowned self] in
            self.history.sample(unixMilliseconds: self.clock.now.unixMilliseconds)
        }
        stops.append(("admin", { [unowned self] in self.closeAdmin() }))
    }

    private func closeAdmin() {
        admin?.close()
        sampleTimer?.close()
        sampleTimer = nil
        metrics.stopLoopLagTimer()
    }

    /// Serves until shut down, then closes every handle and the loop, within a bound.
    /// - Returns: the process exit status: 0 when the loop closed cleanly, 1 when a handle
    ///   had to be closed by force or the loop did not close.
    public func run() -> Int32 {
        if state == .running || state == .draining { loop.run() }
        stopParts()
        state = .stopped
        var status: Int32 = 0
        if !loop.runUntilIdle() {
            let leaked = loop.closeRemainingHandles()
            if !leaked.isEmpty {
                logger.error(
                    "handles left open at shutdown were closed by force",
                    ["handles": .string(leaked.joined(separator: ", "))])
                status = 1
            }
        }
        do {
            try loop.close()
        } catch {
            logger.error(
                "event loop did not close",
                ["error": .string("\(error)"), "open": .string(loop.openHandleDescriptions.joined(separator: ", "))])
            return 1
        }
        if status == 0 { logger.info("stopped") }
        return status
    }

    /// How long the shutdown waits, at most, for every gRPC client to acknowledge the PING
    /// after its GOAWAY before the service drains (never longer than the grace period).
    public static let shutdownAnnounceLimit: Duration = .seconds(1)

    /// Starts the graceful shutdown, in two phases. Announce: stop accepting, health
    /// NOT_SERVING and /readyz 503, GOAWAY and a PING on every gRPC connection; calls are still
    /// served, so a call a client (a proxy reusing its connection) wrote before it read the
    /// GOAWAY is answered, not refused. Drain, once every gRPC client acknowledged its PING or
    /// closed (at most ``shutdownAnnounceLimit``): end parked borrows and watches with
    /// UNAVAILABLE, announce it on every framed connection, answer later calls UNAVAILABLE, and
    /// close each connection when its client does (forcibly when the grace period, counted
    /// from the start of the shutdown, ends).
    public func beginShutdown(reason: String) {
        guard state == .running else { return }
        state = .draining
        logger.info(
            "shutting down",
            [
                "reason": .string(reason),
                "connections": .int(Int64(server.connectionCount)),
                "parkedBorrows": .int(Int64(service.parkedBorrowCount)),
            ])
        readinessLog.check()
        closeListeners()
        sniffer.closeAll()
        tlsAcceptor?.closeAll()
        let gracePeriod = configuration.limits.shutdownGracePeriod
        let started = clock.now
        let sequence = ShutdownSequence(
            transports: transports, status: Status(code: .unavailable, message: "server shutting down"),
            gracePeriod: gracePeriod, announceLimit: min(Self.shutdownAnnounceLimit, gracePeriod),
            remainingGrace: { [unowned self] in gracePeriod - (self.clock.now - started) },
            drainService: { [unowned self] in
                self.logger.info(
                    "shutdown announced; draining", ["parkedBorrows": .int(Int64(self.service.parkedBorrowCount))])
                self.service.beginDrain()
            },
            stop: { [unowned self] in self.drained() })
        shutdown = sequence
        sequence.begin()
    }

    /// Re-reads the configuration (``configurationSource``) and applies its loaders
    /// (``NativeAdvertisementLoader/reconfigure(loaders:)``), or refuses it and keeps the running
    /// one: a configuration that does not load or validate, one that changes a restart-only
    /// setting (``ServerConfiguration/restartOnlyChange(from:)``), a daemon not running.
    /// Logged either way (info when applied, error with the setting when refused).
    /// - Parameter trigger: what asked for it, for the log ("SIGHUP", "Reload call").
    /// - Throws: ``ConfigError`` naming the setting at fault.
    @discardableResult
    public func reload(trigger: String) throws(ConfigError) -> ReconfigureResult {
        do throws(ConfigError) {
            guard state == .running else { throw ConfigError(field: "reload", message: "the server is shutting down") }
            guard let configurationSource else {
                throw ConfigError(
                    field: "config", message: "this daemon was started without a configuration to re-read")
            }
            let next = try configurationSource()
            if let key = next.restartOnlyChange(from: configuration, storeOpened: capStoreOpened) {
                throw ConfigError(field: key, message: "changes only at restart (restart adloaderd to apply it)")
            }
            // Tokens and TLS files first: a file that cannot be read refuses the whole reload.
            let authenticator = CallAuthenticator(
                named: try next.auth.resolvedTokens(), requireOnLoopback: next.auth.requireOnLoopback)
            let tlsContext = try next.tls.isEnabled ? Self.makeTLSContext(next.tls) : nil
            let result = try loader.reconfigure(loaders: next.loaders)
            server.replaceAuthenticator(authenticator)
            if let tlsAcceptor, let tlsContext {
                tlsAcceptor.context = tlsContext
                tlsAcceptor.handshakeTimeout = next.tls.handshakeTimeout
            }
            configuration = next
            history.configurationRows = next.dashboardRows
            metrics.usedSources = Set(next.loaders.map(\.source))
            metrics.reloadsApplied += 1
            logger.info(
                "configuration reloaded",
                [
                    "trigger": .string(trigger), "added": .string(result.added.joined(separator: ",")),
                    "removed": .string(result.removed.joined(separator: ",")),
                    "changedKeepingPools": .string(result.changedKeepingPools.joined(separator: ",")),
                    "changedDroppingPools": .string(result.changedDroppingPools.joined(separator: ",")),
                    "tokens": .string(authenticator.names.joined(separator: ",")),
                    "tls": .string(tlsContext == nil ? "off" : "reloaded"),
                ])
            return result
        } catch {
            metrics.reloadsRefused += 1
            logger.error(
                "configuration reload refused; the running configuration is unchanged",
                ["trigger": .string(trigger), "setting": .string(error.field), "error": .string(error.message)])
            throw error
        }
    }

    /// The TLS context of `settings`, its file errors as configuration errors (exit status 2 at
    /// start, a refused reload later).
    static func makeTLSContext(_ settings: TLSConfiguration) throws(ConfigError) -> TLSContext {
        do throws(TLSError) {
            return try TLSContext(settings)
        } catch {
            throw ConfigError(field: error.field, message: error.message)
        }
    }

    private func signalReceived(_ number: Int32) {
        if number == SIGHUP {
            _ = try? reload(trigger: "SIGHUP")
            return
        }
        let name = number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
        switch state {
        case .running: beginShutdown(reason: name)
        case .draining:
            for transport in transports { transport.closeAll(reason: "second \(name)") }
        default: break
        }
    }

    /// Every connection closed: stop the parts in reverse order; the loop then runs out of work.
    private func drained() {
        guard state == .draining else { return }
        state = .stopped
        stopParts()
        // A handle some part forgot would keep `loop.run()` going: run() bounds what is left.
        loop.stop()
    }

    private func stopParts() {
        while let (_, stop) = stops.popLast() { stop() }
    }

    private func closeListeners() {
        for listener in listeners { listener.close() }
    }

    private func closeSignals() {
        for handle in signals { handle.close() }
        signals.removeAll()
    }

    /// Closes a loop whose setup failed half-way: each owner closes its handle through
    /// its own `close()` (so close callbacks run, retains are released and memory freed),
    /// then the loop runs until they have, and closes.
    /// - Returns: true when `uv_loop_close` succeeded.
    static func abandon(_ loop: UVLoop, closing owners: [() -> Void]) -> Bool {
        for close in owners { close() }
        _ = loop.runUntilIdle()
        do {
            try loop.close()
            return true
        } catch {
            return false
        }
    }
}
