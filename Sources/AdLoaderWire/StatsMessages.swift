public import AdLoaderModel
internal import CAdLoaderProto
internal import CProtobufC

/// `StatsRequest`: filters for the pools to report.
public struct StatsRequestMessage: WireMessage {
    /// Empty means every loader.
    public var loader: String
    /// Empty means every ad unit.
    public var adUnitID: String

    public init(loader: String = "", adUnitID: String = "") {
        self.loader = loader
        self.adUnitID = adUnitID
    }

    public var stringFieldWithNUL: String? { firstFieldWithNUL(["loader": loader, "ad_unit_id": adUnitID]) }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "StatsRequest", unpack: adloader__v1__stats_request__unpack,
            free: adloader__v1__stats_request__free_unpacked
        ) { m in
            StatsRequestMessage(loader: swiftString(m.pointee.loader), adUnitID: swiftString(m.pointee.ad_unit_id))
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__StatsRequest()
            adloader__v1__stats_request__init(&m)
            m.loader = arena.cString(loader)
            m.ad_unit_id = arena.cString(adUnitID)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `StatsResponse`: one entry per matching pool, and the counters of the matching loaders'
/// sources that keep any, and the name of the daemon instance that answered.
public struct StatsResponseMessage: WireMessage {
    public var pools: [PoolStats]
    public var sources: [DemandSourceStats]
    /// Every configured loader matching the loader filter.
    public var loaders: [LoaderState]
    /// The answering daemon's instance name (`listeners.instanceName`, default its
    /// `host:port`); empty from a server that predates the field.
    public var instance: String
    /// The feed plan's counters; zero from a server that predates the field.
    public var feeds: FeedStats
    /// What the pool store gave back at start; nil with the store off (or from a server that
    /// predates the field).
    public var poolStore: PoolStoreStats?

    public init(
        pools: [PoolStats], sources: [DemandSourceStats] = [], loaders: [LoaderState] = [], instance: String = "",
        feeds: FeedStats = FeedStats(), poolStore: PoolStoreStats? = nil
    ) {
        self.pools = pools
        self.sources = sources
        self.loaders = loaders
        self.instance = instance
        self.feeds = feeds
        self.poolStore = poolStore
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "StatsResponse", unpack: adloader__v1__stats_response__unpack,
            free: adloader__v1__stats_response__free_unpacked
        ) { m in
            var pools: [PoolStats] = []
            if m.pointee.n_pools > 0, let list = m.pointee.pools {
                pools.reserveCapacity(m.pointee.n_pools)
                for i in 0..<m.pointee.n_pools {
                    if let entry = list[i] { pools.append(PoolStats(entry)) }
                }
            }
            var sources: [DemandSourceStats] = []
            if m.pointee.n_sources > 0, let list = m.pointee.sources {
                for i in 0..<m.pointee.n_sources {
                    if let entry = list[i] { sources.append(DemandSourceStats(entry)) }
                }
            }
            var loaders: [LoaderState] = []
            if m.pointee.n_loaders > 0, let list = m.pointee.loaders {
                for i in 0..<m.pointee.n_loaders {
                    if let entry = list[i] { loaders.append(LoaderState(entry)) }
                }
            }
            var feeds = FeedStats()
            if let f = m.pointee.feeds?.pointee {
                feeds.feedsHeld = Int(clamping: f.feeds_held)
                feeds.positionsPlanned = f.positions_planned
                feeds.positionsFilled = f.positions_filled
                feeds.comingAnswers = f.coming_answers
                feeds.positionsEmpty = f.positions_empty
                feeds.separationHolds = f.separation_holds
                feeds.feedsExpired = f.feeds_expired
                feeds.feedsRefused = f.feeds_refused
                feeds.guaranteesLost = f.guarantees_lost
            }
            let poolStore = m.pointee.pool_store.map { PoolStoreStats($0) }
            return StatsResponseMessage(
                pools: pools, sources: sources, loaders: loaders, instance: swiftString(m.pointee.instance),
                feeds: feeds, poolStore: poolStore)
        }
    }

    /// The encoded size, computed without packing (the server sizes a Stats answer before
    /// encoding it).
    public var encodedSize: Int? {
        CArena.with { arena in
            var m = cMessage(in: arena)
            return withUnsafeMutablePointer(to: &m) { pointer in
                protobuf_c_message_get_packed_size(
                    UnsafeRawPointer(pointer).assumingMemoryBound(to: ProtobufCMessage.self))
            }
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }

    private func cMessage(in arena: CArena) -> Adloader__V1__StatsResponse {
        var m = Adloader__V1__StatsResponse()
        adloader__v1__stats_response__init(&m)
        if !pools.isEmpty {
            let list = arena.allocate(UnsafeMutablePointer<Adloader__V1__PoolStats>?.self, count: pools.count)
            for (i, pool) in pools.enumerated() { (list + i).initialize(to: pool.cMessage(in: arena)) }
            m.n_pools = pools.count
            m.pools = list
        }
        if !sources.isEmpty {
            let list = arena.allocate(UnsafeMutablePointer<Adloader__V1__SourceStats>?.self, count: sources.count)
            for (i, source) in sources.enumerated() { (list + i).initialize(to: source.cMessage(in: arena)) }
            m.n_sources = sources.count
            m.sources = list
        }
        if !loaders.isEmpty {
            let list = arena.allocate(UnsafeMutablePointer<Adloader__V1__LoaderStatus>?.self, count: loaders.count)
            for (i, loader) in loaders.enumerated() { (list + i).initialize(to: loader.cMessage(in: arena)) }
            m.n_loaders = loaders.count
            m.loaders = list
        }
        m.instance = arena.cString(instance)
        if let poolStore { m.pool_store = poolStore.cMessage(in: arena) }
        // Absent while no feed was ever planned: a Stats answer is as before the field.
        guard feeds != FeedStats() else { return m }
        let f = arena.allocate(Adloader__V1__FeedStats.self)
        adloader__v1__feed_stats__init(f)
        f.pointee.feeds_held = UInt64(max(0, feeds.feedsHeld))
        f.pointee.positions_planned = feeds.positionsPlanned
        f.pointee.positions_filled = feeds.positionsFilled
        f.pointee.coming_answers = feeds.comingAnswers
        f.pointee.positions_empty = feeds.positionsEmpty
        f.pointee.separation_holds = feeds.separationHolds
        f.pointee.feeds_expired = feeds.feedsExpired
        f.pointee.feeds_refused = feeds.feedsRefused
        f.pointee.guarantees_lost = feeds.guaranteesLost
        m.feeds = f
        return m
    }
}

extension PoolStats {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__PoolStats> {
        let m = arena.allocate(Adloader__V1__PoolStats.self)
        adloader__v1__pool_stats__init(m)
        m.pointee.loader = arena.cString(loader)
        m.pointee.ad_unit_id = arena.cString(adUnitID)
        m.pointee.available = UInt32(wire: available)
        m.pointee.leased = UInt32(wire: leased)
        m.pointee.in_flight = UInt32(wire: inFlight)
        m.pointee.parked_borrows = UInt32(wire: parkedBorrows)
        m.pointee.requests_in_flight = UInt32(wire: requestsInFlight)
        m.pointee.target = UInt32(wire: target)
        m.pointee.idle = idle ? 1 : 0
        m.pointee.loaded = loaded
        m.pointee.expired = expired
        m.pointee.consumed = consumed
        m.pointee.removed = removed
        m.pointee.upstream_requests = upstreamRequests
        m.pointee.upstream_failures = upstreamFailures
        m.pointee.borrow_hits = borrowHits
        m.pointee.borrow_misses = borrowMisses
        m.pointee.leases_reclaimed = leasesReclaimed
        m.pointee.restored_ads = restoredAds
        m.pointee.restored_leases = restoredLeases
        m.pointee.held_back_ms = heldBackMilliseconds
        m.pointee.expired_on_arrival = expiredOnArrival
        m.pointee.memory_refused = budgetRefused
        m.pointee.memory_dropped = droppedForMemory
        m.pointee.in_flight_target = UInt32(wire: inFlightTarget)
        m.pointee.held_back = arena.cString(heldBack?.name ?? "")
        m.pointee.round_trip_ms = roundTripMilliseconds
        m.pointee.ads_per_request = adsPerRequest
        m.pointee.minimum_remaining_life_ms = minimumRemainingLifeMilliseconds
        // The standard default class goes as "" (not sent): Stats of pools without signals keep their size.
        m.pointee.consent_class = arena.cString(consentClass == "default" ? "" : consentClass)
        return m
    }

    init(_ m: UnsafePointer<Adloader__V1__PoolStats>) {
        let p = m.pointee
        self.init(
            loader: swiftString(p.loader), adUnitID: swiftString(p.ad_unit_id),
            consentClass: p.consent_class.map { $0.pointee == 0 ? "default" : String(cString: $0) } ?? "default")
        available = Int(p.available)
        leased = Int(p.leased)
        inFlight = Int(p.in_flight)
        parkedBorrows = Int(p.parked_borrows)
        requestsInFlight = Int(p.requests_in_flight)
        target = Int(p.target)
        idle = p.idle != 0
        loaded = p.loaded
        expired = p.expired
        consumed = p.consumed
        removed = p.removed
        upstreamRequests = p.upstream_requests
        upstreamFailures = p.upstream_failures
        borrowHits = p.borrow_hits
        borrowMisses = p.borrow_misses
        leasesReclaimed = p.leases_reclaimed
        restoredAds = p.restored_ads
        restoredLeases = p.restored_leases
        heldBackMilliseconds = p.held_back_ms
        expiredOnArrival = p.expired_on_arrival
        budgetRefused = p.memory_refused
        droppedForMemory = p.memory_dropped
        inFlightTarget = Int(p.in_flight_target)
        let heldBackName = swiftString(p.held_back)
        heldBack = HoldBack.allCases.first { $0.name == heldBackName }
        roundTripMilliseconds = p.round_trip_ms
        adsPerRequest = p.ads_per_request
        minimumRemainingLifeMilliseconds = p.minimum_remaining_life_ms
    }
}

extension DemandSourceStats {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__SourceStats> {
        let m = arena.allocate(Adloader__V1__SourceStats.self)
        adloader__v1__source_stats__init(m)
        m.pointee.name = arena.cString(name)
        m.pointee.requests = requests
        m.pointee.no_fills = noFills
        m.pointee.bids = bids
        m.pointee.bids_dropped = bidsDropped
        m.pointee.failures = failures
        m.pointee.notices_sent = noticesSent
        m.pointee.notices_failed = noticesFailed
        m.pointee.notices_dropped = noticesDropped
        m.pointee.notices_retried = noticesRetried
        m.pointee.notices_restored = noticesRestored
        m.pointee.notices_pending = noticesPending
        m.pointee.notices_uncertain = noticesUncertain
        return m
    }

    init(_ m: UnsafePointer<Adloader__V1__SourceStats>) {
        let p = m.pointee
        self.init(name: swiftString(p.name))
        requests = p.requests
        noFills = p.no_fills
        bids = p.bids
        bidsDropped = p.bids_dropped
        failures = p.failures
        noticesSent = p.notices_sent
        noticesFailed = p.notices_failed
        noticesDropped = p.notices_dropped
        noticesRetried = p.notices_retried
        noticesRestored = p.notices_restored
        noticesPending = p.notices_pending
        noticesUncertain = p.notices_uncertain
    }
}

extension LoaderState {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__LoaderStatus> {
        let m = arena.allocate(Adloader__V1__LoaderStatus.self)
        adloader__v1__loader_status__init(m)
        m.pointee.name = arena.cString(name)
        m.pointee.enabled = enabled ? 1 : 0
        m.pointee.source = arena.cString(source)
        m.pointee.pools = UInt32(wire: pools)
        m.pointee.blocked_creatives = UInt32(wire: blockedCreatives)
        return m
    }

    init(_ m: UnsafePointer<Adloader__V1__LoaderStatus>) {
        let p = m.pointee
        self.init(
            name: swiftString(p.name), enabled: p.enabled != 0, source: swiftString(p.source), pools: Int(p.pools),
            blockedCreatives: Int(p.blocked_creatives))
    }
}

extension PoolStoreStats {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__PoolStoreStats> {
        let m = arena.allocate(Adloader__V1__PoolStoreStats.self)
        adloader__v1__pool_store_stats__init(m)
        m.pointee.restored_from = arena.cString(restoredFrom)
        m.pointee.restored_ads = restoredAds
        m.pointee.restored_leases = restoredLeases
        m.pointee.expired_while_down = expiredWhileDown
        m.pointee.reclaimed_leases = reclaimedLeases
        m.pointee.dropped_ads = droppedAds
        m.pointee.uncertain_ads = uncertainAds
        m.pointee.down_ms = downMilliseconds
        m.pointee.restore_ms = restoreMilliseconds
        m.pointee.journal_bytes = journalBytes
        m.pointee.journal_commits = journalCommits
        m.pointee.journal_checkpoints = journalCheckpoints
        m.pointee.write_failures = writeFailures
        return m
    }

    init(_ m: UnsafePointer<Adloader__V1__PoolStoreStats>) {
        let p = m.pointee
        self.init()
        restoredFrom = swiftString(p.restored_from)
        restoredAds = p.restored_ads
        restoredLeases = p.restored_leases
        expiredWhileDown = p.expired_while_down
        reclaimedLeases = p.reclaimed_leases
        droppedAds = p.dropped_ads
        uncertainAds = p.uncertain_ads
        downMilliseconds = p.down_ms
        restoreMilliseconds = p.restore_ms
        journalBytes = p.journal_bytes
        journalCommits = p.journal_commits
        journalCheckpoints = p.journal_checkpoints
        writeFailures = p.write_failures
    }
}
