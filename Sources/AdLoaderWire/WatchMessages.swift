public import AdLoaderModel
import AdLoaderTime
internal import CAdLoaderProto

/// `WatchRequest`: which events to stream.
public struct WatchRequestMessage: WireMessage {
    /// Empty means every loader.
    public var loader: String
    /// Empty means every ad unit.
    public var adUnitID: String
    /// Empty means every kind.
    public var kinds: [AdEvent.Kind]

    public init(loader: String = "", adUnitID: String = "", kinds: [AdEvent.Kind] = []) {
        self.loader = loader
        self.adUnitID = adUnitID
        self.kinds = kinds
    }

    public var stringFieldWithNUL: String? { firstFieldWithNUL(["loader": loader, "ad_unit_id": adUnitID]) }

    /// - Throws: `.badMessage` "kinds: unknown event kind N" for a kind that is
    ///   unspecified (0) or unknown to this version.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "WatchRequest", unpack: adloader__v1__watch_request__unpack,
            free: adloader__v1__watch_request__free_unpacked
        ) { (m) throws(FrameError) -> WatchRequestMessage in
            let p = m.pointee
            var kinds: [AdEvent.Kind] = []
            if p.n_kinds > 0, let list = p.kinds {
                for i in 0..<p.n_kinds {
                    guard let kind = AdEvent.Kind(list[i]) else {
                        throw FrameError(code: .badMessage, message: "kinds: unknown event kind \(list[i].rawValue)")
                    }
                    kinds.append(kind)
                }
            }
            return WatchRequestMessage(loader: swiftString(p.loader), adUnitID: swiftString(p.ad_unit_id), kinds: kinds)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__WatchRequest()
            adloader__v1__watch_request__init(&m)
            m.loader = arena.cString(loader)
            m.ad_unit_id = arena.cString(adUnitID)
            if !kinds.isEmpty {
                let list = arena.allocate(Adloader__V1__EventKind.self, count: kinds.count)
                for (i, kind) in kinds.enumerated() { (list + i).initialize(to: kind.cValue) }
                m.n_kinds = kinds.count
                m.kinds = list
            }
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `Event`: one pool event, streamed by Watch.
public struct EventMessage: WireMessage {
    public var event: AdEvent

    public init(event: AdEvent) { self.event = event }

    /// A `reason` unknown to this version decodes as nil (the event itself is still good).
    /// - Throws: `.badMessage` "kind: unknown event kind N" for a kind that is unspecified
    ///   or unknown to this version (a client may skip such events).
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "Event", unpack: adloader__v1__event__unpack, free: adloader__v1__event__free_unpacked
        ) { (m) throws(FrameError) -> EventMessage in
            let p = m.pointee
            guard let kind = AdEvent.Kind(p.kind) else {
                throw FrameError(code: .badMessage, message: "kind: unknown event kind \(p.kind.rawValue)")
            }
            var event = AdEvent(
                kind: kind, at: AdInstant(unixMilliseconds: p.at_unix_ms), loader: swiftString(p.loader),
                adUnitID: swiftString(p.ad_unit_id))
            event.adID = nonEmpty(swiftString(p.ad_id))
            event.leaseID = p.lease_id == 0 ? nil : p.lease_id
            event.slot = nonEmpty(swiftString(p.slot_key))
            event.shown = p.shown != 0
            event.count = Int(p.count)
            event.error = nonEmpty(swiftString(p.error)).map(UpstreamError.init(wireDescription:))
            let reasonName = swiftString(p.reason)
            event.reason = AdEvent.Reason(wireName: reasonName)
            if event.kind == .heldBack { event.holdBack = HoldBack.allCases.first { $0.name == reasonName } }
            if event.kind == .restored {
                event.restoration = AdEvent.Restoration(
                    origin: AdEvent.Restoration.Origin(rawValue: reasonName), leases: Int(p.leases),
                    expired: Int(p.expired))
            }
            event.note = nonEmpty(swiftString(p.note))
            return EventMessage(event: event)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__Event()
            adloader__v1__event__init(&m)
            m.kind = event.kind.cValue
            m.at_unix_ms = event.at.unixMilliseconds
            m.loader = arena.cString(event.loader)
            m.ad_unit_id = arena.cString(event.adUnitID)
            m.ad_id = arena.cString(event.adID ?? "")
            m.lease_id = event.leaseID ?? 0
            m.slot_key = arena.cString(event.slot ?? "")
            m.shown = event.shown ? 1 : 0
            m.count = UInt32(wire: event.count)
            m.error = arena.cString(event.error?.description ?? "")
            let reason =
                switch event.kind {
                case .heldBack: event.holdBack?.name ?? ""
                case .restored: event.restoration?.origin?.rawValue ?? ""
                default: event.reason?.wireName ?? ""
                }
            m.reason = arena.cString(reason)
            m.note = arena.cString(event.note ?? "")
            m.leases = UInt32(wire: event.restoration?.leases ?? 0)
            m.expired = UInt32(wire: event.restoration?.expired ?? 0)
            appendPacked(&m, to: &buffer)
        }
    }
}

extension AdEvent.Kind {
    /// The kind for a wire value; nil for UNSPECIFIED and unknown values.
    init?(_ value: Adloader__V1__EventKind) {
        switch value {
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_RECEIVED: self = .received
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_LOAD_FINISHED: self = .loadFinished
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_EXPIRED: self = .expired
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_REMOVED: self = .removed
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_LEASED: self = .leased
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_RETURNED: self = .returned
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_POOL_REMOVED: self = .poolRemoved
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_LOADER_CHANGED: self = .loaderChanged
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_HELD_BACK: self = .heldBack
        case ADLOADER__V1__EVENT_KIND__EVENT_KIND_RESTORED: self = .restored
        default: return nil
        }
    }

    var cValue: Adloader__V1__EventKind {
        switch self {
        case .received: ADLOADER__V1__EVENT_KIND__EVENT_KIND_RECEIVED
        case .loadFinished: ADLOADER__V1__EVENT_KIND__EVENT_KIND_LOAD_FINISHED
        case .expired: ADLOADER__V1__EVENT_KIND__EVENT_KIND_EXPIRED
        case .removed: ADLOADER__V1__EVENT_KIND__EVENT_KIND_REMOVED
        case .leased: ADLOADER__V1__EVENT_KIND__EVENT_KIND_LEASED
        case .returned: ADLOADER__V1__EVENT_KIND__EVENT_KIND_RETURNED
        case .poolRemoved: ADLOADER__V1__EVENT_KIND__EVENT_KIND_POOL_REMOVED
        case .loaderChanged: ADLOADER__V1__EVENT_KIND__EVENT_KIND_LOADER_CHANGED
        case .heldBack: ADLOADER__V1__EVENT_KIND__EVENT_KIND_HELD_BACK
        case .restored: ADLOADER__V1__EVENT_KIND__EVENT_KIND_RESTORED
        }
    }

    /// The proto enum name without prefix, e.g. "LOAD_FINISHED"; also accepted by ``init(wireName:)``.
    public var wireName: String {
        switch self {
        case .received: "RECEIVED"
        case .loadFinished: "LOAD_FINISHED"
        case .expired: "EXPIRED"
        case .removed: "REMOVED"
        case .leased: "LEASED"
        case .returned: "RETURNED"
        case .poolRemoved: "POOL_REMOVED"
        case .loaderChanged: "LOADER_CHANGED"
        case .heldBack: "HELD_BACK"
        case .restored: "RESTORED"
        }
    }

    /// Every kind, in proto order.
    public static let allWireKinds: [AdEvent.Kind] = [
        .received, .loadFinished, .expired, .removed, .leased, .returned, .poolRemoved, .loaderChanged, .heldBack,
        .restored,
    ]

    /// Parses "LOAD_FINISHED", "load_finished" or "load-finished"; nil when unknown.
    public init?(wireName: String) {
        let normalized = String(wireName.uppercased().map { $0 == "-" ? "_" : $0 })
        guard let kind = Self.allWireKinds.first(where: { $0.wireName == normalized }) else { return nil }
        self = kind
    }
}

extension UpstreamError {
    /// Parses the `error` string of an Event, written as `description` ("retryable: timeout");
    /// a string without a known code prefix reads as `.final` with the whole string.
    ///
    /// The prefix is matched on UTF-8 bytes, not on characters: a message that starts with a
    /// combining mark joins the prefix's space into one grapheme, so `hasPrefix` would miss it
    /// and the code would be read into the message (found by the envelope fuzz target).
    init(wireDescription text: String) {
        for code in [Code.retryable, .unreachable, .final] {
            let prefix = "\(code): ".utf8
            if text.utf8.starts(with: prefix) {
                self.init(code: code, message: String(decoding: text.utf8.dropFirst(prefix.count), as: UTF8.self))
                return
            }
        }
        self.init(code: .final, message: text)
    }
}

extension AdEvent.Reason {
    /// The string `Event.reason` carries, e.g. "consumed" (Proto/adloader/v1/adloader.proto).
    public var wireName: String {
        switch self {
        case .consumed: "consumed"
        case .disabled: "disabled"
        case .shutdown: "shutdown"
        case .invalidated: "invalidated"
        case .reclaimed: "reclaimed"
        case .expired: "expired"
        case .reconfigured: "reconfigured"
        case .memoryBudget: "memory_budget"
        case .enabled: "enabled"
        case .added: "added"
        case .removed: "removed"
        }
    }

    /// The reason for a wire string; nil for "" (no reason) and for a reason unknown to this version.
    public init?(wireName: String) {
        guard let reason = Self.allCases.first(where: { $0.wireName == wireName }) else { return nil }
        self = reason
    }
}
