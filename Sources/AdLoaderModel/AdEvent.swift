public import AdLoaderTime

/// Something that happened in a pool, delivered to observers synchronously.
public struct AdEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case received
        case loadFinished
        case expired
        case removed
        case leased
        case returned
        /// An idle, empty pool was removed (``LoaderConfiguration/poolRemovalTimeout``).
        case poolRemoved
        /// A loader was disabled, enabled, added, removed or reconfigured (``reason`` says
        /// which); the ad unit is empty.
        case loaderChanged
        /// A configured cap started holding the pool below its demand, changed, or stopped
        /// (``holdBack`` nil): see ``HoldBack``.
        case heldBack
        /// The pool store gave the pool back at this start (``restoration`` says how much;
        /// ``count`` is the ads back). Emitted once per pool by the restore, before any call is
        /// served; a Watch gets the restored pools' events when it opens.
        case restored
    }

    /// restored: what came back into the pool at this start, beyond the ads (``count``).
    public struct Restoration: Hashable, Sendable {
        /// Where the pools came from.
        public enum Origin: String, Hashable, Sendable, CaseIterable {
            /// The last run stopped cleanly and suspended its pools into the store.
            case suspension
            /// The last run did not stop cleanly: the pools were rebuilt from the journal.
            case journal
        }

        /// nil when the wire named an origin unknown to this version.
        public var origin: Origin?
        /// Leases back under their ids.
        public var leases: Int
        /// Ads of the pool (leased or not) that expired while the server was down.
        public var expired: Int

        public init(origin: Origin?, leases: Int = 0, expired: Int = 0) {
            self.origin = origin
            self.leases = leases
            self.expired = expired
        }
    }

    /// Why the loader removed an ad (`removed` events) or ended a lease itself (`returned`
    /// events). AdLoaderWire carries it as a lowercase string ("consumed", "reclaimed", ...).
    public enum Reason: Hashable, Sendable, CaseIterable {
        /// removed: shown `showCountThreshold` times.
        case consumed
        /// removed: the loader was disabled. returned: the lease's slot was borrowed again
        /// after the loader was disabled while the ad was out.
        case disabled
        /// removed or returned: the loader shut down.
        case shutdown
        /// removed: the source delivered a creative that does not fit the loader's format.
        case invalidated
        /// returned: the lease timeout ended the lease.
        case reclaimed
        /// returned: the lease's slot was borrowed again after the ad expired. (An ad that
        /// expires is reported by an `expired` event, which carries no reason.)
        case expired
        /// removed or returned: a configuration reload removed the loader or changed its
        /// source, format or request. loaderChanged: a reload changed the loader.
        case reconfigured
        /// removed: the memory budget (`limits.maximumAds`) was full and a pool with demand
        /// needed room (``AdDropReason/memoryBudget``).
        case memoryBudget
        /// loaderChanged: the loader was enabled.
        case enabled
        /// loaderChanged: a reload added the loader.
        case added
        /// loaderChanged: a reload removed the loader.
        case removed

        /// The reason naming `drop`.
        package init(_ drop: AdDropReason) {
            switch drop {
            case .expired: self = .expired
            case .consumed: self = .consumed
            case .disabled: self = .disabled
            case .shutdown: self = .shutdown
            case .invalidated: self = .invalidated
            case .reconfigured: self = .reconfigured
            case .memoryBudget: self = .memoryBudget
            }
        }
    }

    public var kind: Kind
    public var at: AdInstant
    public var loader: String
    public var adUnitID: String
    /// The pool's consent class (with ``loader`` and ``adUnitID``, the pool's key); "default"
    /// for loaderChanged events.
    public var consentClass = "default"
    /// received, when the ad joined the pool (not when it was dropped on arrival): the ad as
    /// the pool keeps it, its source context included, for a pool store's journal. Events
    /// compare it by id (``adID`` says which ad; its context compares by identity).
    public var ad: Ad? {
        get { carried?.ad }
        set { carried = newValue.map(CarriedAd.init) }
    }
    private var carried: CarriedAd? = nil
    /// leased: when the lease ends unless returned or renewed.
    public var expiresAt: AdInstant? = nil
    /// received, expired, removed, leased, returned.
    public var adID: String? = nil
    /// leased, returned.
    public var leaseID: UInt64? = nil
    /// leased.
    public var slot: String? = nil
    /// returned.
    public var shown = false
    /// loadFinished: ads received. restored: ads back in the pool, leased ones included.
    public var count = 0
    /// loadFinished: nil on success.
    public var error: UpstreamError? = nil
    /// loaderChanged: `.disabled`, `.enabled`, `.added`, `.removed`, `.reconfigured`.
    /// removed: `.consumed`, `.disabled`, `.shutdown`, `.invalidated`, `.reconfigured`, `.memoryBudget`. returned: why the
    /// loader itself ended the lease (`.reclaimed` by the lease timeout, `.expired` when its
    /// slot was borrowed again after the ad expired, `.disabled`, `.shutdown`); nil when the
    /// client returned it.
    public var reason: Reason? = nil
    /// removed with reason `.invalidated` by a client's Return: the reason the client gave.
    public var note: String? = nil
    /// heldBack: the cap that binds now, nil when the pool is no longer held back.
    public var holdBack: HoldBack? = nil
    /// restored: where the pool came back from, its leases, and its ads that expired meanwhile.
    public var restoration: Restoration? = nil

    public init(kind: Kind, at: AdInstant, loader: String, adUnitID: String) {
        self.kind = kind
        self.at = at
        self.loader = loader
        self.adUnitID = adUnitID
    }
}

/// An event's ad, equal by id: two runs of the same sequence give equal events.
private struct CarriedAd: Hashable, Sendable {
    let ad: Ad
    static func == (a: CarriedAd, b: CarriedAd) -> Bool { a.ad.id == b.ad.id }
    func hash(into hasher: inout Hasher) { hasher.combine(ad.id) }
}
