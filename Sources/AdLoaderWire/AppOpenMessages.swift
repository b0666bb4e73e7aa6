public import AdLoaderModel
internal import CAdLoaderProto

/// `AppOpenRequest`: an app started or returned to the foreground; should it show an app-open ad?
public struct AppOpenRequestMessage: WireMessage {
    /// The policy's inputs (device, session, event, flags, background time, UTC offset).
    public var request: AppOpenRequest
    /// Required: the app-open pool to lend from.
    public var adUnitID: String
    /// Empty means "default".
    public var loader: String
    /// The wire value of `event` when it was neither LAUNCH nor FOREGROUND (the request then
    /// says launch); the server refuses such a call with INVALID_ARGUMENT.
    public var invalidEvent: UInt32?
    /// The device's privacy signals as sent (the service sets `request.privacy` from them);
    /// nil: the loader's default consent class. When nil, `request.privacy` is encoded.
    public var privacy: PrivacySignalsMessage?

    public init(
        request: AppOpenRequest, adUnitID: String, loader: String = "", invalidEvent: UInt32? = nil,
        privacy: PrivacySignalsMessage? = nil
    ) {
        self.request = request
        self.adUnitID = adUnitID
        self.loader = loader
        self.invalidEvent = invalidEvent
        self.privacy = privacy ?? request.privacy.map(PrivacySignalsMessage.init)
    }

    public var stringFieldWithNUL: String? {
        firstFieldWithNUL([
            "device_id": request.deviceID, "session_id": request.sessionID, "ad_unit_id": adUnitID, "loader": loader,
        ])
    }

    /// A missing or unknown event decodes (``invalidEvent`` set), as missing fields of other
    /// requests do, and the service refuses it.
    /// - Throws: `.badMessage` when the bytes do not decode.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "AppOpenRequest", unpack: adloader__v1__app_open_request__unpack,
            free: adloader__v1__app_open_request__free_unpacked
        ) { m in
            let p = m.pointee
            var event = AppOpenEvent.launch
            var invalidEvent: UInt32? = nil
            switch p.event {
            case ADLOADER__V1__APP_OPEN_EVENT__APP_OPEN_EVENT_LAUNCH: event = .launch
            case ADLOADER__V1__APP_OPEN_EVENT__APP_OPEN_EVENT_FOREGROUND: event = .foreground
            default: invalidEvent = p.event.rawValue
            }
            let request = AppOpenRequest(
                deviceID: swiftString(p.device_id), sessionID: swiftString(p.session_id), event: event,
                isFirstLaunch: p.first_launch != 0, backgroundDuration: .seconds(Int64(p.background_seconds)),
                fromUnlock: p.from_unlock != 0, utcOffsetSeconds: Int(p.utc_offset_seconds))
            return AppOpenRequestMessage(
                request: request, adUnitID: swiftString(p.ad_unit_id), loader: swiftString(p.loader),
                invalidEvent: invalidEvent, privacy: p.privacy.map { PrivacySignalsMessage($0.pointee) })
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__AppOpenRequest()
            adloader__v1__app_open_request__init(&m)
            m.device_id = arena.cString(request.deviceID)
            m.session_id = arena.cString(request.sessionID)
            m.event =
                if let invalidEvent { Adloader__V1__AppOpenEvent(rawValue: invalidEvent) } else {
                    switch request.event {
                    case .launch: ADLOADER__V1__APP_OPEN_EVENT__APP_OPEN_EVENT_LAUNCH
                    case .foreground: ADLOADER__V1__APP_OPEN_EVENT__APP_OPEN_EVENT_FOREGROUND
                    }
                }
            m.first_launch = request.isFirstLaunch ? 1 : 0
            let seconds = request.backgroundDuration.components.seconds
            m.background_seconds = UInt32(clamping: seconds)
            m.from_unlock = request.fromUnlock ? 1 : 0
            m.utc_offset_seconds = Int32(clamping: request.utcOffsetSeconds)
            m.ad_unit_id = arena.cString(adUnitID)
            m.loader = arena.cString(loader)
            m.privacy = privacy?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `AppOpenResponse`: the decision, every flag, the counts, and the lease when it shows.
public struct AppOpenResponseMessage: WireMessage {
    /// What the client does.
    public enum Outcome: Hashable, Sendable, CustomStringConvertible {
        /// Show the leased ad; return it with shown to count it.
        case show
        /// Do not show; ``AppOpenResponseMessage/reason`` says why.
        case skip
        /// The policy says show, but the pool had no ad ready; nothing was counted.
        case noAdReady
        /// A value this version does not know (or unspecified).
        case unknown

        public var description: String {
            switch self {
            case .show: "show"
            case .skip: "skip"
            case .noAdReady: "no ad ready"
            case .unknown: "unknown"
            }
        }
    }

    public var outcome: Outcome
    /// nil for APP_OPEN_REASON_UNSPECIFIED or a value this version does not know.
    public var reason: AppOpenDecision.Reason?
    public var flags: AppOpenDecision.Flags
    /// The counts could not be read (they read 0).
    public var storeUnavailable: Bool
    public var counts: AppOpenCounts
    /// SHOWs decided before this call and neither confirmed nor released; the caps applied to
    /// `counts` plus these.
    public var reserved: AppOpenCounts
    /// The device's day, "YYYY-MM-DD".
    public var day: String
    /// Set for ``Outcome/show``.
    public var lease: Lease?

    public init(
        outcome: Outcome, reason: AppOpenDecision.Reason?, flags: AppOpenDecision.Flags, storeUnavailable: Bool = false,
        counts: AppOpenCounts, reserved: AppOpenCounts = AppOpenCounts(), day: String, lease: Lease? = nil
    ) {
        self.outcome = outcome
        self.reason = reason
        self.flags = flags
        self.storeUnavailable = storeUnavailable
        self.counts = counts
        self.reserved = reserved
        self.day = day
        self.lease = lease
    }

    static let reasons: [(AppOpenDecision.Reason, Adloader__V1__AppOpenReason)] = [
        (.firstLaunch, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_FIRST_LAUNCH),
        (.coldStart, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_COLD_START),
        (.hotStart, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_HOT_START),
        (.firstLaunchExcluded, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_FIRST_LAUNCH_EXCLUDED),
        (.coldStartExcluded, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_COLD_START_EXCLUDED),
        (.belowThreshold, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_BELOW_THRESHOLD),
        (.fromUnlock, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_FROM_UNLOCK),
        (.sessionCapReached, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_SESSION_CAP_REACHED),
        (.dailyCapReached, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_DAILY_CAP_REACHED),
        (.storeUnavailable, ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_STORE_UNAVAILABLE),
    ]

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "AppOpenResponse", unpack: adloader__v1__app_open_response__unpack,
            free: adloader__v1__app_open_response__free_unpacked
        ) { m throws(FrameError) in
            let p = m.pointee
            let outcome: Outcome =
                switch p.outcome {
                case ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_SHOW: .show
                case ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_SKIP: .skip
                case ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_NO_AD_READY: .noAdReady
                default: .unknown
                }
            let reason = Self.reasons.first { $0.1 == p.reason }?.0
            let flags = AppOpenDecision.Flags(
                firstLaunch: p.first_launch != 0, coldStart: p.cold_start != 0,
                thresholdReached: p.threshold_reached != 0,
                sessionCapReached: p.session_cap_reached != 0, dailyCapReached: p.daily_cap_reached != 0,
                fromUnlock: p.from_unlock != 0)
            var lease: Lease? = nil
            if let l = p.lease { lease = try Lease(l) }
            return AppOpenResponseMessage(
                outcome: outcome, reason: reason, flags: flags, storeUnavailable: p.store_unavailable != 0,
                counts: AppOpenCounts(session: Int(p.session_count), day: Int(p.daily_count)),
                reserved: AppOpenCounts(session: Int(p.session_reserved), day: Int(p.daily_reserved)),
                day: swiftString(p.day),
                lease: lease)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__AppOpenResponse()
            adloader__v1__app_open_response__init(&m)
            m.outcome =
                switch outcome {
                case .show: ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_SHOW
                case .skip: ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_SKIP
                case .noAdReady: ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_NO_AD_READY
                case .unknown: ADLOADER__V1__APP_OPEN_OUTCOME__APP_OPEN_OUTCOME_UNSPECIFIED
                }
            m.reason =
                Self.reasons.first { $0.0 == reason }?.1 ?? ADLOADER__V1__APP_OPEN_REASON__APP_OPEN_REASON_UNSPECIFIED
            m.first_launch = flags.firstLaunch ? 1 : 0
            m.cold_start = flags.coldStart ? 1 : 0
            m.threshold_reached = flags.thresholdReached ? 1 : 0
            m.session_cap_reached = flags.sessionCapReached ? 1 : 0
            m.daily_cap_reached = flags.dailyCapReached ? 1 : 0
            m.from_unlock = flags.fromUnlock ? 1 : 0
            m.store_unavailable = storeUnavailable ? 1 : 0
            m.session_count = UInt32(wire: counts.session)
            m.daily_count = UInt32(wire: counts.day)
            m.session_reserved = UInt32(wire: reserved.session)
            m.daily_reserved = UInt32(wire: reserved.day)
            m.day = arena.cString(day)
            m.lease = lease?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }
}
