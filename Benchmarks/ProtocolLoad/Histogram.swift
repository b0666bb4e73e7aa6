/// A log-linear latency histogram in nanoseconds: exact below 64 ns, then 32 buckets per
/// power of two (at most ~3 % relative error), up to ~2^40 ns (18 minutes).
///
/// Recording is an index computation and one increment: cheap enough for every call.
struct LatencyHistogram {
    private static let subBucketBits = 5
    private static let subBuckets = 1 << subBucketBits
    private static let maximumExponent = 40
    private static let bucketCount = (maximumExponent - subBucketBits + 2) * subBuckets

    private var counts = [UInt64](repeating: 0, count: bucketCount)
    private(set) var count: UInt64 = 0
    private(set) var maximum: UInt64 = 0
    private(set) var sum: UInt64 = 0

    @inline(__always)
    private static func index(_ value: UInt64) -> Int {
        let v = min(value, (1 << UInt64(maximumExponent + 1)) - 1)
        if v < UInt64(2 * subBuckets) { return Int(v) }
        let msb = 63 - v.leadingZeroBitCount
        let shift = msb - subBucketBits
        return (shift) * subBuckets + Int(v >> UInt64(shift))
    }

    /// The smallest value that falls in bucket `index`.
    private static func lowerBound(_ index: Int) -> UInt64 {
        if index < 2 * subBuckets { return UInt64(index) }
        let shift = index / subBuckets - 1
        let mantissa = UInt64(index % subBuckets + subBuckets)
        return mantissa << UInt64(shift)
    }

    /// Records one latency.
    @inline(__always)
    mutating func record(_ nanoseconds: UInt64) {
        counts[Self.index(nanoseconds)] &+= 1
        count &+= 1
        sum &+= nanoseconds
        if nanoseconds > maximum { maximum = nanoseconds }
    }

    /// Adds every value of `other`.
    mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices { counts[i] &+= other.counts[i] }
        count &+= other.count
        sum &+= other.sum
        maximum = max(maximum, other.maximum)
    }

    /// The value at quantile `q` (0...1): the middle of the bucket holding it, in nanoseconds.
    func quantile(_ q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = UInt64((Double(count) * q).rounded(.up))
        var seen: UInt64 = 0
        for i in counts.indices where counts[i] > 0 {
            seen += counts[i]
            if seen >= max(rank, 1) {
                let low = Self.lowerBound(i)
                let high = Self.lowerBound(i + 1)
                return min((low + high) / 2, maximum)
            }
        }
        return maximum
    }

    var mean: Double { count == 0 ? 0 : Double(sum) / Double(count) }
}
