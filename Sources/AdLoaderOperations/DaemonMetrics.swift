package import AdLoaderCore
package import AdLoaderMetrics
package import AdLoaderService
package import AdLoaderTLS
package import AdLoaderUV
import AdLoaderWire

/// Every metric the daemon exposes, gathered from the parts the composition root owns: the
/// service's ``CallMetrics`` hook, the loader's pool stats, the measured demand sources, the
/// transport, an event-loop lag timer and `/proc/self`. Hot-path counters are kept by their
/// owners; this type only reads them at scrape time.
///
/// Label cardinality is bounded: methods (5) x status codes (17); sources and loaders come from
/// the configuration; pools are capped per loader by `maximumPools` and, for metrics, by
/// ``ServerConfiguration/Admin/maxPoolSeries``: the first pools seen get their own series,
/// later ones are summed per loader as `ad_unit="_other"`. A pool keeps its place once seen: a
/// pool removed when idle and empty drops its series, and if it comes back it has its own
/// series again, its counters restarting from zero (a counter reset), never moving to `_other`.
///
/// - Important: loop-confined.
package final class DaemonMetrics {
    /// The `ad_unit` label of the pools beyond ``ServerConfiguration/Admin/maxPoolSeries``.
    package static let otherAdUnit = "_other"
    /// How often the loop-lag timer fires.
    package static let lagInterval: UInt64 = 100

    package let calls = CallMetrics()
    package let sources: [MeasuredDemandSource]
    /// The app-open cap store, measured (operations, up).
    package let capStore: MeasuredCapStore?
    package let loopLag = Histogram(bounds: Histogram.loopLagSeconds)
    /// Largest lag seen since the dashboard's last sample, in seconds.
    package var maxLagSinceSample = 0.0
    private let loader: NativeAdvertisementLoader
    private let service: AdLoaderService
    private let server: ServerContext
    private let transports: [any ServerTransport]
    /// The TCP listener's TLS handshakes; nil when TLS is off.
    private let tls: TLSAcceptor?
    private let maxPoolSeries: Int
    private var namedPools: Set<PoolKey> = []
    private var lagTimer: UVTimer?
    private var lastTick: UInt64 = 0
    package let startedAtUnixSeconds: Double
    /// Admin connections now (set by the daemon when the admin listener exists).
    package var adminConnectionCount: () -> Int = { 0 }
    /// Whether the daemon is listening and not draining (set by the daemon).
    package var isServing: () -> Bool = { false }
    /// Whether the daemon's shutdown began (set by the daemon; the service drains a moment later).
    package var isDraining: () -> Bool = { false }
    /// Configuration reloads applied and refused (SIGHUP and the Reload call; counted by the daemon).
    package var reloadsApplied: UInt64 = 0
    package var reloadsRefused: UInt64 = 0
    /// The commit of the build, for `adloader_build_info` (set by the composition root).
    package var commit = "unknown"

    package struct PoolKey: Hashable {
        var loader: String
        var adUnitID: String
    }

    package init(
        loader: NativeAdvertisementLoader, service: AdLoaderService, server: ServerContext,
        transports: [any ServerTransport], sources: [MeasuredDemandSource], capStore: MeasuredCapStore? = nil,
        usedSources: Set<String>, maxPoolSeries: Int, tls: TLSAcceptor? = nil, startedAtUnixSeconds: Double
    ) {
        self.tls = tls
        self.capStore = capStore
        self.usedSources = usedSources
        self.loader = loader
        self.service = service
        self.server = server
        self.transports = transports
        self.sources = sources.sorted { $0.name < $1.name }
        self.maxPoolSeries = maxPoolSeries
        self.startedAtUnixSeconds = startedAtUnixSeconds
    }

    // MARK: Event-loop lag

    /// Starts the lag timer: it asks to fire every ``lagInterval`` ms and records how much later
    /// than asked it ran (a busy or blocked loop delays every timer, call and read by as much).
    package func startLoopLagTimer(loop: UVLoop) throws(UVError) {
        let timer = try UVTimer(loop: loop)
        timer.unref()
        lagTimer = timer
        lastTick = UVLoop.highResolutionNanoseconds
        timer.start(timeout: Self.lagInterval, repeat: Self.lagInterval) { [unowned self] in self.lagTick() }
    }

    package func stopLoopLagTimer() {
        lagTimer?.close()
        lagTimer = nil
    }

    private func lagTick() {
        let now = UVLoop.highResolutionNanoseconds
        let late = Double(Int64(bitPattern: now &- lastTick) - Int64(Self.lagInterval) * 1_000_000) / 1e9
        lastTick = now
        let lag = max(0, late)
        loopLag.observe(lag)
        maxLagSinceSample = max(maxLagSinceSample, lag)
    }

    // MARK: Readiness

    /// The sources some loader uses (readiness counts only those); set again by a reload.
    package var usedSources: Set<String>

    /// Ready: listening and not draining, and at least one demand source a loader uses reachable
    /// (sources never asked count as reachable). The reasons say what is not.
    package var readiness: (ready: Bool, reasons: [String]) {
        var reasons: [String] = []
        if service.isDraining || isDraining() {
            reasons.append("draining")
        } else if !isServing() {
            reasons.append("not listening")
        }
        // Only the sources some loader uses: a configured source nobody asks (the built-in
        // synthetic one beside an exchange) serves nothing and must not keep the replica ready.
        let used = sources.filter { usedSources.contains($0.name) }
        if !used.isEmpty, used.allSatisfy({ !$0.isReachable }) {
            reasons.append("every demand source unreachable (" + used.map(\.name).joined(separator: ", ") + ")")
        }
        return (reasons.isEmpty, reasons)
    }

    // MARK: Pools

    /// Pool stats with the pools beyond the series cap summed per loader.
    package func poolStats() -> [PoolStats] {
        var result: [PoolStats] = []
        var others: [String: PoolStats] = [:]
        for stats in loader.stats() {
            let key = PoolKey(loader: stats.loader, adUnitID: stats.adUnitID)
            if namedPools.contains(key) || namedPools.count < maxPoolSeries {
                namedPools.insert(key)
                result.append(stats)
            } else {
                var other = others[stats.loader] ?? PoolStats(loader: stats.loader, adUnitID: Self.otherAdUnit)
                other.add(stats)
                others[stats.loader] = other
            }
        }
        return result + others.keys.sorted().map { others[$0]! }
    }

    /// The target size of a loader's pools: today its `maximumRetainedAdvertisements` (demand
    /// based sizing, issue 10, will report its own target here).

    // MARK: Families

    package func families() -> [MetricFamily] {
        var families = calls.families()
        families += poolFamilies(poolStats())
        families += sourceFamilies()
        families += capStoreFamilies()
        families += poolStoreFamilies()
        families += loaderFamilies()
        families += serverFamilies()
        families += securityFamilies()
        families += feedFamilies()
        return families
    }

    /// The feed plan (Plan), every loader together.
    private func feedFamilies() -> [MetricFamily] {
        let feeds = loader.feedStats
        func counter(_ name: String, _ help: String, _ value: UInt64) -> MetricFamily {
            MetricFamily(name: name, help: help, kind: .counter, samples: [.init([], Double(value))])
        }
        return [
            MetricFamily(
                name: "adloader_feeds_held",
                help: "Feeds whose Plan answers are kept (loaders.NAME.feeds.maximum each).",
                kind: .gauge, samples: [.init([], Double(feeds.feedsHeld))]),
            counter(
                "adloader_feed_positions_planned", "Ad positions a Plan answered for the first time.",
                feeds.positionsPlanned),
            counter("adloader_feed_positions_filled", "Ad positions a Plan gave their ad.", feeds.positionsFilled),
            counter(
                "adloader_feed_coming_answers",
                "Plan answers COMING (a position ahead without an ad yet; one position may count several times).",
                feeds.comingAnswers),
            counter(
                "adloader_feed_positions_empty", "Ad positions rendered without an ad (they stay empty).",
                feeds.positionsEmpty),
            counter(
                "adloader_feed_separation_holds",
                "Plan fills that passed over available ads to keep the separation rules (the position stayed coming or empty).",
                feeds.separationHolds),
            counter(
                "adloader_feeds_expired", "Feeds forgotten after loaders.NAME.feeds.idleTimeout without a Plan call.",
                feeds.feedsExpired),
            counter(
                "adloader_feeds_refused", "New feeds refused at loaders.NAME.feeds.maximum (RESOURCE_EXHAUSTED).",
                feeds.feedsRefused),
        ]
    }

    private func poolFamilies(_ pools: [PoolStats]) -> [MetricFamily] {
        func labels(_ stats: PoolStats) -> [MetricFamily.Label] {
            [.init("loader", stats.loader), .init("ad_unit", stats.adUnitID)]
        }
        func gauge(_ name: String, _ help: String, _ value: (PoolStats) -> Double) -> MetricFamily {
            MetricFamily(name: name, help: help, kind: .gauge, samples: pools.map { .init(labels($0), value($0)) })
        }
        func counter(_ name: String, _ help: String, _ value: (PoolStats) -> UInt64) -> MetricFamily {
            MetricFamily(
                name: name, help: help, kind: .counter, samples: pools.map { .init(labels($0), Double(value($0))) })
        }
        let borrows = pools.flatMap { stats in
            [
                MetricFamily.Sample(labels(stats) + [.init("result", "hit")], Double(stats.borrowHits)),
                MetricFamily.Sample(labels(stats) + [.init("result", "miss")], Double(stats.borrowMisses)),
            ]
        }
        return [
            gauge("adloader_pool_available_ads", "Ads in the pool ready to lend.") { Double($0.available) },
            gauge("adloader_pool_leased_ads", "Ads lent under an open lease.") { Double($0.leased) },
            gauge("adloader_pool_in_flight_ads", "Ads asked for upstream and not answered yet.") {
                Double($0.inFlight)
            },
            gauge(
                "adloader_pool_target_ads",
                "Loaded + in-flight ads the pool tops up to: its measured demand's target (sizing demand) or maximumRetainedAdvertisements (sizing fixed)."
            ) { Double($0.target) },
            gauge("adloader_pool_idle", "1 when the pool has had no borrow or prefetch for its idleTimeout.") {
                $0.idle ? 1 : 0
            },
            gauge(
                "adloader_pool_in_flight_requests",
                "Upstream requests of this pool not answered yet (at most its in-flight target and maximumConcurrentRequests)."
            ) {
                Double($0.requestsInFlight)
            },
            gauge(
                "adloader_pool_in_flight_target",
                "Upstream requests the pool's measured demand asks to keep in flight (2 x fresh borrows/s x round trip / ads per request + 2)."
            ) { Double($0.inFlightTarget) },
            MetricFamily(
                name: "adloader_pool_held_back",
                help:
                    "1 while a configured cap holds the pool below its demand, by cap: pool_ceiling (maximumConcurrentRequests), source_budget (maximumRequestsPerSecond), memory_budget (limits.maximumAds).",
                kind: .gauge,
                samples: pools.flatMap { stats in
                    HoldBack.allCases.map { cap in
                        MetricFamily.Sample(labels(stats) + [.init("cap", cap.name)], stats.heldBack == cap ? 1 : 0)
                    }
                }),
            MetricFamily(
                name: "adloader_pool_held_back_seconds", help: "Time the pool spent held back by a configured cap.",
                kind: .counter, samples: pools.map { .init(labels($0), Double($0.heldBackMilliseconds) / 1_000) }),
            gauge(
                "adloader_pool_round_trip_seconds",
                "Measured upstream round trip of this pool (average of answered requests)."
            ) {
                $0.roundTripMilliseconds / 1_000
            },
            gauge("adloader_pool_ads_per_request", "Measured ads per answered upstream request (no-fills count 0).") {
                $0.adsPerRequest
            },
            gauge("adloader_pool_parked_borrows", "Borrows waiting in this pool for an ad.") {
                Double($0.parkedBorrows)
            },
            MetricFamily(
                name: "adloader_pool_borrows",
                help: "Borrows answered with a lease (hit) or without an ad / refused parking (miss).", kind: .counter,
                samples: borrows),
            counter("adloader_pool_ads_loaded", "Ads received from the source.") { $0.loaded },
            counter(
                "adloader_pool_ads_expired",
                "Ads that reached their expiry unconsumed: the waste (with showCountThreshold 1, never shown)."
            ) { $0.expired },
            counter("adloader_pool_ads_consumed", "Ads shown showCountThreshold times.") { $0.consumed },
            counter(
                "adloader_pool_ads_removed",
                "Ads dropped neither consumed nor expired: the loader disabled, shut down or reconfigured, or the creative invalidated."
            ) { $0.removed },
            counter("adloader_pool_upstream_requests", "Requests this pool sent to its source, probes included.") {
                $0.upstreamRequests
            },
            counter("adloader_pool_upstream_failures", "Requests of this pool the source answered with an error.") {
                $0.upstreamFailures
            },
            counter("adloader_pool_leases_reclaimed", "Leases ended by the lease timeout.") { $0.leasesReclaimed },
            counter(
                "adloader_pool_ads_expired_on_arrival",
                "Ads that arrived with less than the minimum remaining life left (dropped, also counted expired)."
            ) { $0.expiredOnArrival },
            counter("adloader_pool_memory_refused_ads", "Ads a top-up did not ask for because of limits.maximumAds.") {
                $0.budgetRefused
            },
            counter(
                "adloader_pool_ads_dropped_for_memory",
                "Unleased ads dropped to make room under limits.maximumAds for a pool with demand (also counted removed)."
            ) { $0.droppedForMemory },
        ]
    }

    private func sourceFamilies() -> [MetricFamily] {
        func source(_ s: MeasuredDemandSource) -> [MetricFamily.Label] { [.init("source", s.name)] }
        return [
            MetricFamily(
                name: "adloader_upstream_requests", help: "Requests sent to the demand source (probes included).",
                kind: .counter, samples: sources.map { .init(source($0), Double($0.requests)) }),
            MetricFamily(
                name: "adloader_upstream_ads_received", help: "Ads the demand source delivered.", kind: .counter,
                samples: sources.map { .init(source($0), Double($0.adsReceived)) }),
            MetricFamily(
                name: "adloader_upstream_failures",
                help:
                    "Failed upstream requests by class: retryable (retried after a delay, up to retry.maximumCount in a row), unreachable (the loader probes), final (not retried).",
                kind: .counter,
                samples: sources.flatMap { s in
                    MeasuredDemandSource.failureClasses.enumerated().map { index, code in
                        .init(source(s) + [.init("class", code.description)], Double(s.failures[index]))
                    }
                }),
            MetricFamily(
                name: "adloader_upstream_request_duration_seconds",
                help: "Time from sending an upstream request to its answer.", kind: .histogram,
                samples: sources.map { .init(source($0), histogram: $0.latency.snapshot) }),
            MetricFamily(
                name: "adloader_upstream_in_flight_requests", help: "Upstream requests not answered yet.",
                kind: .gauge, samples: sources.map { .init(source($0), Double($0.inFlight)) }),
            MetricFamily(
                name: "adloader_upstream_reachable",
                help: "1 unless the source's last answer was an unreachable failure (then the loader probes).",
                kind: .gauge, samples: sources.map { .init(source($0), $0.isReachable ? 1 : 0) }),
            MetricFamily(
                name: "adloader_source_notices",
                help:
                    "Notices the loader gave the source: shown (an impression) or an unshown ad dropped (expired, disabled, shutdown, invalidated, reconfigured, memory_budget).",
                kind: .counter,
                samples: sources.flatMap { s in
                    MeasuredDemandSource.noticeKinds.enumerated().map { index, kind in
                        .init(source(s) + [.init("notice", kind)], Double(s.notices[index]))
                    }
                }),
        ] + sourceOwnFamilies()
    }

    /// The counters a source keeps of its own work (``DemandSourceStats``; the OpenRTB source's
    /// bids, no-fills and notice deliveries), for the sources that keep them.
    private func sourceOwnFamilies() -> [MetricFamily] {
        let kept = sources.compactMap { s in s.statistics.map { (name: s.name, stats: $0) } }
        guard !kept.isEmpty else { return [] }
        func label(_ name: String) -> [MetricFamily.Label] { [.init("source", name)] }
        return [
            MetricFamily(
                name: "adloader_source_bids",
                help:
                    "Bids by outcome: kept (turned into ads) or dropped (unusable: a native asset missing, bad banner or VAST markup, an mtype not asked for, outbid; each logged with its reason).",
                kind: .counter,
                samples: kept.flatMap { k in
                    [
                        .init(label(k.name) + [.init("outcome", "kept")], Double(k.stats.bids)),
                        .init(label(k.name) + [.init("outcome", "dropped")], Double(k.stats.bidsDropped)),
                    ]
                }),
            Self.droppedBidsFamily(kept),
            MetricFamily(
                name: "adloader_source_no_fills",
                help: "Requests the source answered without any usable ad (204, no bid, every bid dropped).",
                kind: .counter, samples: kept.map { .init(label($0.name), Double($0.stats.noFills)) }),
            MetricFamily(
                name: "adloader_source_notice_deliveries",
                help:
                    "Win, billing and loss notices by result: delivered (200 or 204), failed (given up after the last try), dropped (the notice queue was full, or the source closing), retried (tries after a first one), uncertain (under way when the previous run ended: never sent again).",
                kind: .counter,
                samples: kept.flatMap { k in
                    [
                        ("delivered", k.stats.noticesSent), ("failed", k.stats.noticesFailed),
                        ("dropped", k.stats.noticesDropped), ("retried", k.stats.noticesRetried),
                        ("uncertain", k.stats.noticesUncertain),
                    ].map { .init(label(k.name) + [.init("result", $0.0)], Double($0.1)) }
                }),
            MetricFamily(
                name: "adloader_source_notices_pending", help: "Notices in flight or waiting for their next try.",
                kind: .gauge, samples: kept.map { .init(label($0.name), Double($0.stats.noticesPending)) }),
        ]
    }

    /// `adloader_source_bids_dropped_total{source,reason}`: the dropped bids of each source that
    /// names their reasons (``DemandSourceStats/bidsDroppedByReason``), reasons sorted by name.
    package static func droppedBidsFamily(_ kept: [(name: String, stats: DemandSourceStats)]) -> MetricFamily {
        MetricFamily(
            name: "adloader_source_bids_dropped",
            help:
                "Bids dropped while their response was read, by the OpenRTB loss reason their loss notice gets: invalid_bid (3: not an object, no or an unknown impid, native markup unusable), missing_markup (7), missing_price (9), below_floor (100: priced under the impression's bidfloor), outbid (102: a higher bid for the same impression), wrong_format (204: a medium not asked for, video markup not VAST).",
            kind: .counter,
            samples: kept.flatMap { k in
                k.stats.bidsDroppedByReason.sorted { $0.key < $1.key }.map { reason, count in
                    .init([.init("source", k.name), .init("reason", reason)], Double(count))
                }
            })
    }

    /// What the pool store gave back at start and its journal's work (Stats' `pool_store`);
    /// nothing with the store off.
    private func poolStoreFamilies() -> [MetricFamily] {
        guard let stats = service.poolStoreStats?() else { return [] }
        return [
            MetricFamily(
                name: "adloader_pool_store_restored_ads",
                help:
                    "Ads the pool store held at this start, by outcome: restored (leased ones included), expired (while down), dropped (loader gone or changed), uncertain (journal records that did not decode).",
                kind: .gauge,
                samples: [
                    ("restored", stats.restoredAds), ("expired", stats.expiredWhileDown),
                    ("dropped", stats.droppedAds), ("uncertain", stats.uncertainAds),
                ].map { .init([.init("outcome", $0.0)], Double($0.1)) }),
            MetricFamily(
                name: "adloader_pool_store_restored_leases", help: "Leases the pool store gave back at this start.",
                kind: .gauge, samples: [.init([], Double(stats.restoredLeases))]),
            MetricFamily(
                name: "adloader_pool_store_journal_bytes", help: "The pool journal's size.", kind: .gauge,
                samples: [.init([], Double(stats.journalBytes))]),
            MetricFamily(
                name: "adloader_pool_store_journal_writes",
                help: "Pool journal writes (one per loop pass that changed a pool) since the start.", kind: .counter,
                samples: [.init([], Double(stats.journalCommits))]),
            MetricFamily(
                name: "adloader_pool_store_write_failures",
                help: "Pool journal and notice-store writes that failed since the start (each logged).",
                kind: .counter, samples: [.init([], Double(stats.writeFailures))]),
        ]
    }

    private func capStoreFamilies() -> [MetricFamily] {
        guard let capStore else { return [] }
        let store = MetricFamily.Label("store", capStore.kind)
        return [
            MetricFamily(
                name: "adloader_cap_store_operations",
                help:
                    "App-open cap store operations (counts: the read before a decision; confirm_show: the count after a show) by result.",
                kind: .counter,
                samples: MeasuredCapStore.operationNames.enumerated().flatMap { index, name in
                    [
                        MetricFamily.Sample(
                            [store, .init("operation", name), .init("result", "ok")],
                            Double(capStore.operations[index].ok)),
                        MetricFamily.Sample(
                            [store, .init("operation", name), .init("result", "error")],
                            Double(capStore.operations[index].failed)),
                    ]
                }),
            MetricFamily(
                name: "adloader_cap_store_up",
                help:
                    "1 unless the cap store's last answer was an error (store none: no appOpen loader, nothing is stored).",
                kind: .gauge, samples: [.init([store], capStore.isUp ? 1 : 0)]),
        ]
    }

    private func loaderFamilies() -> [MetricFamily] {
        let loaders = loader.loaderStates()
        func labels(_ state: LoaderState) -> [MetricFamily.Label] { [.init("loader", state.name)] }
        return [
            MetricFamily(
                name: "adloader_loader_enabled",
                help:
                    "1 when the loader lends and fills; 0 after SetLoaderEnabled(false) (adloader disable) or enabled: false.",
                kind: .gauge, samples: loaders.map { .init(labels($0), $0.enabled ? 1 : 0) }),
            MetricFamily(
                name: "adloader_loader_blocked_creatives",
                help: "Creatives the loader does not lend now: invalidated by a Return, for its invalidationBlockTime.",
                kind: .gauge, samples: loaders.map { .init(labels($0), Double($0.blockedCreatives)) }),
            MetricFamily(
                name: "adloader_config_reloads",
                help:
                    "Configuration reloads (SIGHUP, the Reload call): applied, or refused with the running configuration kept.",
                kind: .counter,
                samples: [
                    .init([.init("result", "applied")], Double(reloadsApplied)),
                    .init([.init("result", "refused")], Double(reloadsRefused)),
                ]),
        ]
    }

    /// Calls by token name, and TLS handshakes (results, versions, client subjects). Bounded:
    /// token names come from the configuration, subjects are capped at
    /// ``TLSAcceptor/maxCallerSeries`` (the rest are `_other`).
    private func securityFamilies() -> [MetricFamily] {
        var families: [MetricFamily] = []
        // Only with tokens (or after them): without, no call has a caller to count.
        let byName = server.callsByName
        if service.authenticator.isEnabled || !byName.isEmpty {
            families.append(
                MetricFamily(
                    name: "adloader_calls_by_caller",
                    help:
                        "Calls admitted with a valid token, by the token's name (auth.tokens are token-1, token-2...; auth.namedTokens and auth.tokenFiles give names).",
                    kind: .counter,
                    samples: byName.sorted { $0.key < $1.key }.map {
                        .init([.init("caller", $0.key)], Double($0.value))
                    }))
        }
        guard let tls else { return families }
        let counts = tls.counts
        families += [
            MetricFamily(
                name: "adloader_tls_handshakes",
                help:
                    "TLS handshakes on the TCP listener: completed, failed (garbage, old protocol, client certificate refused) or timed out (tls.handshakeTimeout).",
                kind: .counter,
                samples: [
                    .init([.init("result", "completed")], Double(counts.completed)),
                    .init([.init("result", "failed")], Double(counts.failed)),
                    .init([.init("result", "timed_out")], Double(counts.timedOut)),
                ]),
            MetricFamily(
                name: "adloader_tls_handshakes_by_version",
                help: "Completed TLS handshakes by negotiated protocol version.",
                kind: .counter,
                samples: counts.byVersion.sorted { $0.key < $1.key }.map {
                    .init([.init("version", $0.key)], Double($0.value))
                }),
            MetricFamily(
                name: "adloader_tls_handshakes_by_caller",
                help:
                    "Completed TLS handshakes with a verified client certificate, by its subject (at most \(TLSAcceptor.maxCallerSeries) subjects, the rest as _other).",
                kind: .counter,
                samples: counts.byCaller.sorted { $0.key < $1.key }.map {
                    .init([.init("caller", $0.key)], Double($0.value))
                }),
            MetricFamily(
                name: "adloader_tls_handshakes_pending", help: "TLS handshakes under way.", kind: .gauge,
                samples: [.init([], Double(tls.pendingCount))]),
        ]
        return families
    }

    private func serverFamilies() -> [MetricFamily] {
        let process = ProcessStats.read()
        let ready = readiness.ready
        func gauge(_ name: String, _ help: String, _ value: Double) -> MetricFamily {
            MetricFamily(name: name, help: help, kind: .gauge, samples: [.init([], value)])
        }
        return [
            gauge("adloader_connections", "Open client connections, every transport.", Double(server.connectionCount)),
            MetricFamily(
                name: "adloader_transport_connections", help: "Open client connections, by transport.", kind: .gauge,
                samples: transports.map {
                    .init([.init("transport", $0.name)], Double(server.connectionCount(transport: $0.name)))
                }),
            MetricFamily(
                name: "adloader_connections_refused",
                help:
                    "Connections closed at accept (limits.maxConnections, all transports together, or shutting down).",
                kind: .counter,
                samples: transports.map {
                    .init([.init("transport", $0.name)], Double(server.connectionsRefused(transport: $0.name)))
                }),
            MetricFamily(
                name: "adloader_build_info",
                help: "Always 1; the labels say which build runs (as ServerInfo and --version).",
                kind: .gauge,
                samples: [
                    .init(
                        [
                            .init("version", BuildInfo.version), .init("build", BuildInfo.build),
                            .init("commit", commit),
                        ], 1)
                ]),
            gauge(
                "adloader_parked_borrows", "Borrows parked waiting for an ad, whole server.",
                Double(service.parkedBorrowCount)),
            gauge("adloader_open_calls", "Calls open now (parked borrows and watches).", Double(service.openCallCount)),
            gauge("adloader_admin_connections", "Open admin HTTP connections.", Double(adminConnectionCount())),
            gauge("adloader_ready", "1 when /readyz answers 200.", ready ? 1 : 0),
            MetricFamily(
                name: "adloader_event_loop_lag_seconds",
                help: "How late a \(Self.lagInterval) ms loop timer fires: the one event loop's health.",
                kind: .histogram, samples: [.init(histogram: loopLag.snapshot)]),
            gauge("process_resident_memory_bytes", "Resident memory size in bytes.", process.residentBytes),
            gauge("process_open_fds", "Open file descriptors.", process.openDescriptors),
            gauge("process_max_fds", "Limit on open file descriptors.", process.maxDescriptors),
            MetricFamily(
                name: "process_cpu_seconds", help: "User and system CPU time spent, in seconds.", kind: .counter,
                samples: [.init([], process.cpuSeconds)]),
            gauge(
                "process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.",
                startedAtUnixSeconds),
        ]
    }
}

extension PoolStats {
    /// Adds another pool's gauges and counters (for the `_other` series).
    package mutating func add(_ other: PoolStats) {
        available += other.available
        leased += other.leased
        inFlight += other.inFlight
        parkedBorrows += other.parkedBorrows
        loaded += other.loaded
        expired += other.expired
        consumed += other.consumed
        removed += other.removed
        upstreamRequests += other.upstreamRequests
        upstreamFailures += other.upstreamFailures
        borrowHits += other.borrowHits
        borrowMisses += other.borrowMisses
        leasesReclaimed += other.leasesReclaimed
        heldBackMilliseconds += other.heldBackMilliseconds
        expiredOnArrival += other.expiredOnArrival
        budgetRefused += other.budgetRefused
        droppedForMemory += other.droppedForMemory
    }
}
