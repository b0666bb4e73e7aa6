public import AdLoaderTime

/// One loaded ad as the loader lends it: where it belongs, what it shows, and when it expires.
///
/// The same type for every format: its ``creative`` is native assets or a full-screen
/// creative, and nothing else about it depends on the format.
///
/// A value type with copy-on-write storage: an ad is handed from the pool to its lease, the
/// borrow result, the answer and its encoding, and each of those copies costs one reference
/// count instead of one per string of the ad (about twenty). Mutating a copy never affects
/// another; equality and hashing are those of the fields, as if they were stored inline
/// (the source context by identity).
public struct Ad: Hashable, Sendable {
    /// The fields, shared between copies until one of them is mutated.
    private final class Storage: @unchecked Sendable {
        // @unchecked: mutated only through `mutableStorage`, i.e. when uniquely referenced,
        // so no two values (or threads) ever see a write to a shared instance.
        var id: String
        var adUnitID: String
        var loader: String
        var creative: AdCreative
        var format: AdFormat
        var loadedAt: AdInstant
        var expiresAt: AdInstant
        var showCount: Int
        var sourceContext: (any AdSourceContext)?
        var creativeID: String?
        var advertiserDomains: [String]
        var categories: [String]

        init(
            id: String, adUnitID: String, loader: String, creative: AdCreative, format: AdFormat, loadedAt: AdInstant,
            expiresAt: AdInstant, showCount: Int, sourceContext: (any AdSourceContext)?, creativeID: String?,
            advertiserDomains: [String], categories: [String]
        ) {
            self.id = id
            self.adUnitID = adUnitID
            self.loader = loader
            self.creative = creative
            self.format = format
            self.loadedAt = loadedAt
            self.expiresAt = expiresAt
            self.showCount = showCount
            self.sourceContext = sourceContext
            self.creativeID = creativeID
            self.advertiserDomains = advertiserDomains
            self.categories = categories
        }

        func copy() -> Storage {
            Storage(
                id: id, adUnitID: adUnitID, loader: loader, creative: creative, format: format, loadedAt: loadedAt,
                expiresAt: expiresAt, showCount: showCount, sourceContext: sourceContext, creativeID: creativeID,
                advertiserDomains: advertiserDomains, categories: categories)
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
    /// What the ad shows: native assets or a full-screen creative.
    public var creative: AdCreative {
        get { storage.creative }
        set { mutableStorage.creative = newValue }
    }
    /// The format of the loader that loaded it (a full-screen creative serves interstitial,
    /// rewarded and app-open loaders alike).
    public var format: AdFormat {
        get { storage.format }
        set { mutableStorage.format = newValue }
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
    /// Shows counted so far (shown returns of its leases).
    public var showCount: Int {
        get { storage.showCount }
        set { mutableStorage.showCount = newValue }
    }
    /// What its demand source delivered with it (``DeliveredAd/context``), handed back in the
    /// source's notices. Never on the wire: nil for an ad a client decoded.
    public var sourceContext: (any AdSourceContext)? {
        get { storage.sourceContext }
        set { mutableStorage.sourceContext = newValue }
    }

    /// The source's id of the creative (``DeliveredAd/creativeID``, e.g. OpenRTB `crid`); nil
    /// when the source gave none. Never on the wire. See ``CreativeKey``.
    public var creativeID: String? {
        get { storage.creativeID }
        set { mutableStorage.creativeID = newValue }
    }

    /// The advertiser's domains (``DeliveredAd/advertiserDomains``, OpenRTB `adomain`), as the
    /// feed plan's separation compares them; empty when the source gave none. Never on the wire.
    public var advertiserDomains: [String] {
        get { storage.advertiserDomains }
        set { mutableStorage.advertiserDomains = newValue }
    }

    /// The creative's IAB content categories (``DeliveredAd/categories``, OpenRTB `cat`), as the
    /// feed plan's separation compares them; empty when the source gave none. Never on the wire.
    public var categories: [String] {
        get { storage.categories }
        set { mutableStorage.categories = newValue }
    }

    /// - Parameters:
    ///   - format: the loader's format; nil means native for native assets and interstitial
    ///     for a full-screen creative.
    ///   - creativeID: the source's id of the creative, if it gave one.
    ///   - advertiserDomains: the advertiser's domains, if the source gave them.
    ///   - categories: the creative's IAB categories, if the source gave them.
    public init(
        id: String, adUnitID: String, loader: String, creative: AdCreative, format: AdFormat? = nil,
        loadedAt: AdInstant, expiresAt: AdInstant, showCount: Int = 0, sourceContext: (any AdSourceContext)? = nil,
        creativeID: String? = nil, advertiserDomains: [String] = [], categories: [String] = []
    ) {
        let format = format ?? (creative.nativeContent != nil ? .native : .interstitial)
        storage = Storage(
            id: id, adUnitID: adUnitID, loader: loader, creative: creative, format: format, loadedAt: loadedAt,
            expiresAt: expiresAt, showCount: showCount, sourceContext: sourceContext, creativeID: creativeID,
            advertiserDomains: advertiserDomains, categories: categories)
    }

    public static func == (lhs: Ad, rhs: Ad) -> Bool {
        if lhs.storage === rhs.storage { return true }
        let l = lhs.storage
        let r = rhs.storage
        return l.id == r.id && l.adUnitID == r.adUnitID && l.loader == r.loader && l.creative == r.creative
            && l.format == r.format && l.loadedAt == r.loadedAt && l.expiresAt == r.expiresAt
            && l.showCount == r.showCount
            && l.sourceContext === r.sourceContext && l.creativeID == r.creativeID
            && l.advertiserDomains == r.advertiserDomains && l.categories == r.categories
    }

    public func hash(into hasher: inout Hasher) {
        let s = storage
        hasher.combine(s.id)
        hasher.combine(s.adUnitID)
        hasher.combine(s.loader)
        hasher.combine(s.creative)
        hasher.combine(s.format)
        hasher.combine(s.loadedAt)
        hasher.combine(s.expiresAt)
        hasher.combine(s.showCount)
        hasher.combine(s.sourceContext.map(ObjectIdentifier.init))
        hasher.combine(s.creativeID)
        hasher.combine(s.advertiserDomains)
        hasher.combine(s.categories)
    }
}

extension Ad: CustomReflectable {
    /// The fields, as if stored inline, so `print`, `dump` and test failures show them as before.
    /// The source context is left out: it is the source's business.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "id": id, "adUnitID": adUnitID, "loader": loader, "creative": creative, "format": format,
                "loadedAt": loadedAt,
                "expiresAt": expiresAt, "showCount": showCount,
            ], displayStyle: .struct)
    }
}
