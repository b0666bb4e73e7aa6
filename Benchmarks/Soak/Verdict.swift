/// One sample of the daemon while the soak runs.
struct Sample {
    var seconds: Double
    var residentKiB: Int
    var descriptors: Int
    /// Round trip of a Stats call: how long the daemon's single loop took to get to it.
    var statsMilliseconds: Double
    var calls: Int
}

/// The checks on the samples once the run is over.
enum Verdict {
    /// Least-squares slope of RSS over time (KiB per second) of `samples`.
    static func slope(_ samples: ArraySlice<Sample>) -> Double {
        let n = Double(samples.count)
        guard n >= 2 else { return 0 }
        let meanT = samples.map(\.seconds).reduce(0, +) / n
        let meanR = samples.map { Double($0.residentKiB) }.reduce(0, +) / n
        var covariance = 0.0
        var variance = 0.0
        for s in samples {
            covariance += (s.seconds - meanT) * (Double(s.residentKiB) - meanR)
            variance += (s.seconds - meanT) * (s.seconds - meanT)
        }
        return variance > 0 ? covariance / variance : 0
    }

    /// The samples whose RSS trend is judged: the last half of those after warm-up.
    static func judged(_ samples: [Sample], warmupFraction: Double) -> ArraySlice<Sample> {
        let warm = Int(Double(samples.count) * warmupFraction)
        let start = warm + (samples.count - warm) / 2
        return samples[min(start, samples.count)...]
    }

    /// RSS growth over `window` (the ``judged(_:warmupFraction:)`` samples), by its trend line (KiB).
    static func growthKiB(over window: ArraySlice<Sample>) -> Double {
        guard let first = window.first, let last = window.last else { return 0 }
        return slope(window) * (last.seconds - first.seconds)
    }
}
