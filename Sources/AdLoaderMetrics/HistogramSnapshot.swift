/// A histogram's state at one instant: cumulative counts per upper bound (the last for +Inf)
/// and the sum of the observations.
public struct HistogramSnapshot: Hashable, Sendable {
    public var bounds: [Double]
    /// `cumulativeCounts[i]`: observations <= `bounds[i]`; the last element counts all of them.
    public var cumulativeCounts: [UInt64]
    public var sum: Double

    public init(bounds: [Double], cumulativeCounts: [UInt64], sum: Double) {
        precondition(cumulativeCounts.count == bounds.count + 1)
        self.bounds = bounds
        self.cumulativeCounts = cumulativeCounts
        self.sum = sum
    }

    /// Every observation.
    public var count: UInt64 { cumulativeCounts.last ?? 0 }

    /// The observations made between `earlier` and this snapshot (same bounds).
    public func subtracting(_ earlier: HistogramSnapshot) -> HistogramSnapshot {
        guard earlier.bounds == bounds else { return self }
        return HistogramSnapshot(
            bounds: bounds, cumulativeCounts: zip(cumulativeCounts, earlier.cumulativeCounts).map { $0 &- $1 },
            sum: sum - earlier.sum)
    }

    /// Adds another snapshot with the same bounds (e.g. several methods' latencies together).
    public func adding(_ other: HistogramSnapshot) -> HistogramSnapshot {
        guard other.bounds == bounds else { return self }
        return HistogramSnapshot(
            bounds: bounds, cumulativeCounts: zip(cumulativeCounts, other.cumulativeCounts).map { $0 &+ $1 },
            sum: sum + other.sum)
    }

    /// The `q`-quantile (0...1) by linear interpolation inside its bucket, like PromQL's
    /// `histogram_quantile`; nil without observations. Above the last bound: the last bound.
    public func quantile(_ q: Double) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        let rank = q * Double(total)
        var previousCount: UInt64 = 0
        var previousBound = 0.0
        for (index, bound) in bounds.enumerated() {
            let cumulative = cumulativeCounts[index]
            if Double(cumulative) >= rank {
                let inBucket = Double(cumulative - previousCount)
                guard inBucket > 0 else { return bound }
                return previousBound + (bound - previousBound) * (rank - Double(previousCount)) / inBucket
            }
            previousCount = cumulative
            previousBound = bound
        }
        return bounds.last
    }
}
