/// Which positions of a feed carry an ad: fixed positions, then a repeating interval, at most
/// ``maximumAdsPerFeed`` ads — the semantics of MoPub's stream ad placer (`MoPubClientPositioning`
/// and its server-positioning JSON) and AppLovin MAX's ad placer.
///
/// Positions are 0-based indices in the feed as the user sees it, ads included (as MoPub's).
/// The repeating ads start after the last fixed position: with fixed positions `[1, 4]` and
/// interval 5 the ads are at 1, 4, 9, 14, ...; without fixed positions the first repeating ad
/// is at `interval - 1` (interval 5: 4, 9, 14, ...). An interval below 2 would put two ads
/// side by side and is refused, as both placers refuse it.
public struct PlacementRules: Hashable, Sendable {
    /// Ascending, distinct, each in `0...maximumPosition`.
    public var fixedPositions: [Int]
    /// Ads every this many positions after the last fixed one (2...``maximumPosition``); nil:
    /// only the fixed positions.
    public var repeatingInterval: Int?
    /// The most ads one feed carries (1...``maximumAdsLimit``); later positions carry none.
    public var maximumAdsPerFeed: Int

    /// The highest position and interval accepted (MoPub's bound, 2^16).
    public static let maximumPosition = 65_536
    /// The highest ``maximumAdsPerFeed`` accepted.
    public static let maximumAdsLimit = 4_096
    /// ``maximumAdsPerFeed`` when not set: AppLovin MAX's bound (MoPub's is 255).
    public static let defaultMaximumAds = 256

    /// An ad every 5 positions from position 4, at most 256 per feed.
    public init(fixedPositions: [Int] = [], repeatingInterval: Int? = 5, maximumAdsPerFeed: Int = defaultMaximumAds) {
        self.fixedPositions = fixedPositions
        self.repeatingInterval = repeatingInterval
        self.maximumAdsPerFeed = maximumAdsPerFeed
    }

    /// Checks every field; the error names the first one out of range under `prefix`
    /// (e.g. `loaders.default.placement`).
    /// - Throws: ``ConfigError``.
    public func validate(prefix: String) throws(ConfigError) {
        var previous = -1
        for (index, position) in fixedPositions.enumerated() {
            if !(0...Self.maximumPosition).contains(position) {
                throw ConfigError(
                    field: "\(prefix).fixedPositions[\(index)]",
                    message: "must be 0...\(Self.maximumPosition), got \(position)")
            }
            if position <= previous {
                throw ConfigError(
                    field: "\(prefix).fixedPositions[\(index)]",
                    message: "must be ascending and distinct, got \(position) after \(previous)")
            }
            previous = position
        }
        if let interval = repeatingInterval, !(2...Self.maximumPosition).contains(interval) {
            throw ConfigError(
                field: "\(prefix).repeatingInterval",
                message: "must be 2...\(Self.maximumPosition) (1 would put ads side by side), got \(interval)")
        }
        if !(1...Self.maximumAdsLimit).contains(maximumAdsPerFeed) {
            throw ConfigError(
                field: "\(prefix).maximumAdsPerFeed",
                message: "must be 1...\(Self.maximumAdsLimit), got \(maximumAdsPerFeed)")
        }
    }

    /// The ad's ordinal at `position` (0 for the feed's first ad), or nil when the position
    /// carries no ad.
    public func adIndex(at position: Int) -> Int? {
        guard position >= 0 else { return nil }
        let index: Int
        if let fixed = fixedIndex(of: position) {
            index = fixed
        } else {
            guard let interval = repeatingInterval else { return nil }
            let last = fixedPositions.last ?? -1
            let offset = position - last
            guard offset > 0, offset % interval == 0 else { return nil }
            index = fixedPositions.count + offset / interval - 1
        }
        return index < maximumAdsPerFeed ? index : nil
    }

    /// Whether `position` carries an ad.
    public func carriesAd(_ position: Int) -> Bool { adIndex(at: position) != nil }

    /// The ad positions in `range`, ascending.
    public func adPositions(in range: Range<Int>) -> [Int] {
        var result: [Int] = []
        let lower = max(0, range.lowerBound)
        guard lower < range.upperBound else { return result }
        for position in fixedPositions where position >= lower && position < range.upperBound {
            if carriesAd(position) { result.append(position) }
        }
        if let interval = repeatingInterval {
            let last = fixedPositions.last ?? -1
            // The first repeating position at or after `lower`.
            var position =
                lower <= last + interval
                ? last + interval : last + ((lower - last + interval - 1) / interval) * interval
            while position < range.upperBound, carriesAd(position) {
                result.append(position)
                position += interval
            }
        }
        return result
    }

    private func fixedIndex(of position: Int) -> Int? {
        var low = 0
        var high = fixedPositions.count
        while low < high {
            let middle = (low + high) / 2
            if fixedPositions[middle] < position { low = middle + 1 } else { high = middle }
        }
        return low < fixedPositions.count && fixedPositions[low] == position ? low : nil
    }
}
