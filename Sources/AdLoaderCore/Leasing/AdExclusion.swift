/// Which ads a borrow must not be lent: a predicate over ``Ad``, e.g. "any ad except these
/// creatives" for a feed plan that keeps the same creative, advertiser or category apart.
///
/// Checked only against ads that could be lent (available, enough life left); the soonest to
/// expire among those that pass is lent. Without an exclusion (the default) lending costs
/// what it always did: the heap's first ad. With one it is a scan of the pool's available
/// ads, O(available).
///
/// - Important: the predicate runs on the loader's thread, inside the borrow; it must not
///   call the loader.
public struct AdExclusion {
    /// True for an ad that must not be lent.
    public let excludes: (Ad) -> Bool

    public init(_ excludes: @escaping (Ad) -> Bool) {
        self.excludes = excludes
    }

    /// Excludes the ads of these creatives (``CreativeKey``).
    public static func creatives(_ keys: Set<CreativeKey>) -> AdExclusion {
        AdExclusion { keys.contains(CreativeKey($0)) }
    }

    /// Excludes these ads, by id.
    public static func ads(_ ids: Set<String>) -> AdExclusion {
        AdExclusion { ids.contains($0.id) }
    }
}
