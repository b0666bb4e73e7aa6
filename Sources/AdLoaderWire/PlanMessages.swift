public import AdLoaderCore
internal import CAdLoaderProto

/// `PlanRequest`: a window of one feed (PROTOCOL.md 7.11).
public struct PlanRequestMessage: WireMessage {
    public var feedID: String
    public var adUnitID: String
    /// Empty: the default loader.
    public var loader: String
    public var firstVisible: UInt32
    public var lastVisible: UInt32
    public var ahead: UInt32
    /// The feed's own placement rules, if the call gives them.
    public var placement: PlacementMessage?
    /// The device's privacy signals; nil: the loader's default consent class.
    public var privacy: PrivacySignalsMessage?

    /// `PlacementRules`: 0 for "none" / "the loader's".
    public struct PlacementMessage: Hashable, Sendable {
        public var fixedPositions: [UInt32]
        public var repeatingInterval: UInt32
        public var maximumAds: UInt32

        public init(fixedPositions: [UInt32] = [], repeatingInterval: UInt32 = 0, maximumAds: UInt32 = 0) {
            self.fixedPositions = fixedPositions
            self.repeatingInterval = repeatingInterval
            self.maximumAds = maximumAds
        }
    }

    public init(
        feedID: String, adUnitID: String, loader: String = "", firstVisible: UInt32, lastVisible: UInt32,
        ahead: UInt32 = 0, placement: PlacementMessage? = nil, privacy: PrivacySignalsMessage? = nil
    ) {
        self.feedID = feedID
        self.adUnitID = adUnitID
        self.loader = loader
        self.firstVisible = firstVisible
        self.lastVisible = lastVisible
        self.ahead = ahead
        self.placement = placement
        self.privacy = privacy
    }

    public var stringFieldWithNUL: String? {
        firstFieldWithNUL(["feed_id": feedID, "ad_unit_id": adUnitID, "loader": loader])
            ?? privacy?.stringFields.sorted { $0.key < $1.key }.first { $0.value.utf8.contains(0) }?.key
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "PlanRequest", unpack: adloader__v1__plan_request__unpack,
            free: adloader__v1__plan_request__free_unpacked
        ) { m in
            let p = m.pointee
            var placement: PlacementMessage?
            if let rules = p.placement {
                let r = rules.pointee
                let fixed = (0..<r.n_fixed_positions).map { r.fixed_positions[$0] }
                placement = PlacementMessage(
                    fixedPositions: fixed, repeatingInterval: r.repeating_interval, maximumAds: r.maximum_ads)
            }
            return PlanRequestMessage(
                feedID: swiftString(p.feed_id), adUnitID: swiftString(p.ad_unit_id), loader: swiftString(p.loader),
                firstVisible: p.first_visible, lastVisible: p.last_visible, ahead: p.ahead, placement: placement,
                privacy: p.privacy.map { PrivacySignalsMessage($0.pointee) })
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__PlanRequest()
            adloader__v1__plan_request__init(&m)
            m.feed_id = arena.cString(feedID)
            m.ad_unit_id = arena.cString(adUnitID)
            m.loader = arena.cString(loader)
            m.first_visible = firstVisible
            m.last_visible = lastVisible
            m.ahead = ahead
            if let placement {
                let r = arena.allocate(Adloader__V1__PlacementRules.self)
                adloader__v1__placement_rules__init(r)
                r.pointee.n_fixed_positions = placement.fixedPositions.count
                let fixed = arena.allocate(UInt32.self, count: max(1, placement.fixedPositions.count))
                for (i, position) in placement.fixedPositions.enumerated() { fixed[i] = position }
                r.pointee.fixed_positions = fixed
                r.pointee.repeating_interval = placement.repeatingInterval
                r.pointee.maximum_ads = placement.maximumAds
                m.placement = r
            }
            m.privacy = privacy?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `PlanResponse`: every ad position of the window, ascending.
public struct PlanResponseMessage: WireMessage {
    public var plan: FeedPlan

    public init(plan: FeedPlan) { self.plan = plan }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "PlanResponse", unpack: adloader__v1__plan_response__unpack,
            free: adloader__v1__plan_response__free_unpacked
        ) { (m) throws(FrameError) -> PlanResponseMessage in
            let p = m.pointee
            var positions: [PlannedPosition] = []
            for i in 0..<p.n_positions {
                guard let entry = p.positions[i]?.pointee else { continue }
                let state: PlannedPosition.State
                switch entry.state {
                case ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_AD:
                    guard let lease = entry.lease else {
                        throw FrameError(code: .badMessage, message: "positions[\(i)].lease: missing for AD")
                    }
                    state = .ad(try Lease(lease))
                case ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_COMING: state = .coming
                case ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_EMPTY: state = .empty
                default:
                    throw FrameError(
                        code: .badMessage, message: "positions[\(i)].state: unknown \(entry.state.rawValue)")
                }
                positions.append(PlannedPosition(position: Int(entry.position), state: state))
            }
            return PlanResponseMessage(plan: FeedPlan(positions: positions, created: p.created != 0))
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__PlanResponse()
            adloader__v1__plan_response__init(&m)
            let count = plan.positions.count
            let entries = arena.allocate(
                UnsafeMutablePointer<Adloader__V1__PlannedPosition>?.self, count: max(1, count))
            for (i, planned) in plan.positions.enumerated() {
                let e = arena.allocate(Adloader__V1__PlannedPosition.self)
                adloader__v1__planned_position__init(e)
                e.pointee.position = UInt32(clamping: planned.position)
                switch planned.state {
                case .ad(let lease):
                    e.pointee.state = ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_AD
                    e.pointee.lease = lease.cMessage(in: arena)
                case .coming: e.pointee.state = ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_COMING
                case .empty: e.pointee.state = ADLOADER__V1__PLANNED_STATE__PLANNED_STATE_EMPTY
                }
                entries[i] = e
            }
            m.n_positions = count
            m.positions = entries
            m.created = plan.created ? 1 : 0
            appendPacked(&m, to: &buffer)
        }
    }
}
