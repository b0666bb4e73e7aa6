/// One loaded native ad as the loader lends it.
public struct NativeAd: Hashable, Sendable {
    /// Unique within one loader instance.
    public var id: String
    public var adUnitID: String
    public var loader: String
    public var content: NativeAdContent
    public var loadedAt: AdInstant
    /// The sooner of `loadedAt + lifetime` and the source's own expiry.
    public var expiresAt: AdInstant
    public var showCount: Int

    public init(
        id: String, adUnitID: String, loader: String, content: NativeAdContent, loadedAt: AdInstant,
        expiresAt: AdInstant, showCount: Int = 0
    ) {
        self.id = id
        self.adUnitID = adUnitID
        self.loader = loader
        self.content = content
        self.loadedAt = loadedAt
        self.expiresAt = expiresAt
        self.showCount = showCount
    }
}

/// An ad lent to a feed cell until it is returned or the lease times out.
public struct Lease: Hashable, Sendable {
    /// Never 0.
    public var id: UInt64
    /// The feed cell, or nil when the borrow named none.
    public var slot: String?
    public var expiresAt: AdInstant
    public var ad: NativeAd

    public init(id: UInt64, slot: String?, expiresAt: AdInstant, ad: NativeAd) {
        self.id = id
        self.slot = slot
        self.expiresAt = expiresAt
        self.ad = ad
    }
}

/// The answer to a borrow.
public enum BorrowResult: Hashable, Sendable {
    /// A lease; `reused` when the slot already held it.
    case leased(Lease, reused: Bool)
    /// The pool was empty (and stayed empty for the wait).
    case noAdYet
    /// The loader shut down, or the loader was disabled while the borrow was parked.
    case unavailable
}

/// What happened to an ad when its lease ended.
public enum ReturnOutcome: Hashable, Sendable {
    case backInPool
    case consumed
    case expired
    case removed
}

/// The answer to a prefetch.
public struct PrefetchResult: Hashable, Sendable {
    public var available: Int
    public var inFlight: Int
    /// Ads this call asked for upstream.
    public var requested: Int

    public init(available: Int, inFlight: Int, requested: Int) {
        self.available = available
        self.inFlight = inFlight
        self.requested = requested
    }
}

/// Gauges and counters of one pool, (loader, ad unit).
///
/// Every ad ever loaded is in exactly one place, so at all times
/// `loaded == available + leased + consumed + expired + removed`.
public struct PoolStats: Hashable, Sendable {
    public var loader: String
    public var adUnitID: String
    /// Gauge: ads in the pool, ready to lend. May include ads that expired since the last
    /// sweep, borrow or prefetch (they are never lent, and counted expired when found).
    public var available = 0
    /// Gauge: ads lent under an open lease.
    public var leased = 0
    /// Gauge: ads asked for upstream and not answered yet.
    public var inFlight = 0
    /// Gauge: borrows waiting for an ad.
    public var parkedBorrows = 0
    /// Ads received from the source (including ones dropped or expired on arrival).
    public var loaded: UInt64 = 0
    /// Ads that reached their expiry unconsumed (in the pool, or when their lease ended).
    public var expired: UInt64 = 0
    /// Ads shown `showCountThreshold` times (reported as event `removed`, reason "consumed").
    public var consumed: UInt64 = 0
    /// Ads dropped neither consumed nor expired: by disabling the loader or shutdown,
    /// including ads that arrived for a disabled loader. Consumed ads are not counted here.
    public var removed: UInt64 = 0
    /// Requests sent to the demand source, probes included.
    public var upstreamRequests: UInt64 = 0
    /// Requests the source answered with an error.
    public var upstreamFailures: UInt64 = 0
    /// Borrows answered with a lease (new or reused), parked ones included.
    public var borrowHits: UInt64 = 0
    /// Borrows answered `.noAdYet` (at once or when the wait ended).
    public var borrowMisses: UInt64 = 0
    /// Leases ended by the lease timeout.
    public var leasesReclaimed: UInt64 = 0

    public init(loader: String, adUnitID: String) {
        self.loader = loader
        self.adUnitID = adUnitID
    }
}

/// Something that happened in a pool, delivered to observers synchronously.
public struct AdEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case received
        case loadFinished
        case expired
        case removed
        case leased
        case returned
    }

    public var kind: Kind
    public var at: AdInstant
    public var loader: String
    public var adUnitID: String
    /// received, expired, removed, leased, returned.
    public var adID: String? = nil
    /// leased, returned.
    public var leaseID: UInt64? = nil
    /// leased.
    public var slot: String? = nil
    /// returned.
    public var shown = false
    /// loadFinished: ads received.
    public var count = 0
    /// loadFinished: nil on success.
    public var error: UpstreamError? = nil
    /// removed: "consumed", "disabled", "shutdown". returned: why the loader itself ended
    /// the lease ("reclaimed" by the lease timeout, "expired" when its slot borrowed again
    /// after the ad expired, "disabled", "shutdown"); nil when the client returned it.
    public var reason: String? = nil

    public init(kind: Kind, at: AdInstant, loader: String, adUnitID: String) {
        self.kind = kind
        self.at = at
        self.loader = loader
        self.adUnitID = adUnitID
    }
}

/// A request the loader refuses; maps to a gRPC status at the server.
public struct LoaderError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable { case invalidArgument, notFound, unavailable }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A field is empty, unknown or out of range; `field` names it.
        public static let invalidArgument = Code(.invalidArgument)
        /// The lease is unknown (never lent, already returned, or reclaimed).
        public static let notFound = Code(.notFound)
        /// The loader is disabled or shutting down.
        public static let unavailable = Code(.unavailable)

        public var description: String {
            switch wrapped {
            case .invalidArgument: "invalid argument"
            case .notFound: "not found"
            case .unavailable: "unavailable"
            }
        }
    }

    public var code: Code
    /// The request field at fault, e.g. "ad_unit_id", when there is one.
    public var field: String?
    public var message: String

    public init(code: Code, field: String? = nil, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { field.map { "\($0): \(message)" } ?? message }
}
