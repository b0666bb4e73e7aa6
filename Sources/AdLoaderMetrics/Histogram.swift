/// A histogram with fixed bucket upper bounds, counting observations per bucket.
///
/// `observe(_:)` costs a short search over the bounds and two additions: cheap enough for every
/// call the daemon serves.
///
/// - Important: not thread-safe: loop-confined, like everything it measures.
public final class Histogram {
    /// Upper bounds, increasing; the implicit last bucket is +Inf.
    public let bounds: [Double]
    /// Observations per bucket (not cumulative); the last one is above every bound.
    private var counts: [UInt64]
    private var sum = 0.0
    private var count: UInt64 = 0

    /// Latency buckets in seconds, 100 µs to 10 s.
    public static let latencySeconds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// Loop-lag buckets in seconds, 1 ms to 5 s: a libuv timer fires late by whole milliseconds.
    public static let loopLagSeconds: [Double] = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5]

    /// - Parameter bounds: increasing, finite upper bounds.
    public init(bounds: [Double]) {
        precondition(!bounds.isEmpty && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must increase")
        precondition(bounds.allSatisfy(\.isFinite), "bounds must be finite")
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Counts one observation (NaN is ignored).
    public func observe(_ value: Double) {
        guard !value.isNaN else { return }
        // Binary search for the first bound >= value.
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if value <= bounds[middle] { high = middle } else { low = middle + 1 }
        }
        counts[low] &+= 1
        sum += value
        count &+= 1
    }

    /// The cumulative view the exposition formats write.
    public var snapshot: HistogramSnapshot {
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(counts.count)
        var running: UInt64 = 0
        for bucket in counts {
            running &+= bucket
            cumulative.append(running)
        }
        return HistogramSnapshot(bounds: bounds, cumulativeCounts: cumulative, sum: sum)
    }
}
