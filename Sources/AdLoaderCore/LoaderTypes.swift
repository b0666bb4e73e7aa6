/// One loaded native ad as the loader lends it.
///
/// A value type with copy-on-write storage: an ad is handed from the pool to its lease, the
/// borrow result, the answer and its encoding, and each of those copies costs one reference
/// count instead of one per string of the ad (about twenty). Mutating a copy never affects
/// another; equality and hashing are those of the fields, as if they were stored inline.
public struct NativeAd: Hashable, Sendable {
    /// The fields, shared between copies until one of them is mutated.
    private final class Storage: @unchecked Sendable {
        // @unchecked: mutated only through `mutableStorage`, i.e. when uniquely referenced,
        // so no two values (or threads) ever see a write to a shared instance.
        var id: String
        var adUnitID: String
        var loader: String
        var content: NativeAdContent
        var loadedAt: AdInstant
        var expiresAt: AdInstant
        var showCount: Int

        init(
            id: String, adUnitID: String, loader: String, content: NativeAdContent, loadedAt: AdInstant,
            expiresAt: AdInstant, showCount: Int
        ) {
            self.id = id
            self.adUnitID = adUnitID
            self.loader = loader
            self.content = content
            self.loadedAt = loadedAt
            self.expiresAt = expiresAt
            self.showCount = showCount
        }

        func copy() -> Storage {
            Storage(
                id: id, adUnitID: adUnitID, loader: loader, content: content, loadedAt: loadedAt, expiresAt: expiresAt,
                showCount: showCount)
        }
    }

    private var storage: Storage

    /// The storage, copied first when another value shares it.
    private var mutableStorage: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// Unique within one loader instance.
    public var id: String {
        get { storage.id }
        set { mutableStorage.id = newValue }
    }
    public var adUnitID: String {
        get { storage.adUnitID }
        set { mutableStorage.adUnitID = newValue }
    }
    public var loader: String {
        get { storage.loader }
        set { mutableStorage.loader = newValue }
    }
    public var content: NativeAdContent {
        get { storage.content }
        set { mutableStorage.content = newValue }
    }
    public var loadedAt: AdInstant {
        get { storage.loadedAt }
        set { mutableStorage.loadedAt = newValue }
    }
    /// The sooner of `loadedAt + lifetime` and the source's own expiry.
    public var expiresAt: AdInstant {
        get { storage.expiresAt }
        set { mutableStorage.expiresAt = newValue }
    }
    public var showCount: Int {
        get { storage.showCount }
        set { mutableStorage.showCount = newValue }
    }

    public init(
        id: String, adUnitID: String, loader: String, content: NativeAdContent, loadedAt: AdInstant,
        expiresAt: AdInstant, showCount: Int = 0
    ) {
        storage = Storage(
            id: id, adUnitID: adUnitID, loader: loader, content: content, loadedAt: loadedAt, expiresAt: expiresAt,
            showCount: showCount)
    }

    public static func == (lhs: NativeAd, rhs: NativeAd) -> Bool {
        if lhs.storage === rhs.storage { return true }
        let l = lhs.storage
        let r = rhs.storage
        return l.id == r.id && l.adUnitID == r.adUnitID && l.loader == r.loader && l.content == r.content
            && l.loadedAt == r.loadedAt && l.expiresAt == r.expiresAt && l.showCount == r.showCount
    }

    public func hash(into hasher: inout Hasher) {
        let s = storage
        hasher.combine(s.id)
        hasher.combine(s.adUnitID)
        hasher.combine(s.loader)
        hasher.combine(s.content)
        hasher.combine(s.loadedAt)
        hasher.combine(s.expiresAt)
        hasher.combine(s.showCount)
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
    /// Borrows answered `.noAdYet` (at once or when the wait ended), and borrows refused
    /// parking (``BorrowOutcome/parkingRefused``).
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
        private enum Wrapped: Hashable, Sendable { case invalidArgument, notFound, unavailable, resourceExhausted }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A field is empty, unknown or out of range; `field` names it.
        public static let invalidArgument = Code(.invalidArgument)
        /// The lease is unknown (never lent, already returned, or reclaimed).
        public static let notFound = Code(.notFound)
        /// The loader is disabled or shutting down.
        public static let unavailable = Code(.unavailable)
        /// A resource limit of the loader is reached, e.g. its
        /// ``LoaderConfiguration/maximumPools``; the message names the limit. Nothing was
        /// changed or asked upstream; the same call may succeed once the resource is freed.
        public static let resourceExhausted = Code(.resourceExhausted)

        public var description: String {
            switch wrapped {
            case .invalidArgument: "invalid argument"
            case .notFound: "not found"
            case .unavailable: "unavailable"
            case .resourceExhausted: "resource exhausted"
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

extension NativeAd: CustomReflectable {
    /// The fields, as if stored inline, so `print`, `dump` and test failures show them as before.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "id": id, "adUnitID": adUnitID, "loader": loader, "content": content, "loadedAt": loadedAt,
                "expiresAt": expiresAt, "showCount": showCount,
            ], displayStyle: .struct)
    }
}
