/// The daemon-wide memory budget: ads loaded (available or leased) plus asked for, across
/// every pool of a loader instance, never above ``maximum``
/// (``NativeAdvertisementLoader/maximumAds``). A top-up asks for no more than ``room``; a
/// pool it cuts is held back (``HoldBack/memoryBudget``).
///
/// - Important: loop-confined like the loader; shared by its pools.
final class AdMemoryBudget {
    @exclusivity(unchecked) var maximum: Int = .max
    /// Loaded plus in-flight ads of every pool.
    @exclusivity(unchecked) var held = 0

    /// Ads that may still be asked for.
    var room: Int { max(0, maximum - held) }
}
