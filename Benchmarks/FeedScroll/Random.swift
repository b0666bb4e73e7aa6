import AdLoaderCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Distributions the simulation draws from, on the project's seeded generator so a seed
/// replays the same traces on every platform and toolchain.
extension SplitMix64 {
    /// Uniform in `range` (closed, small ranges).
    mutating func integer(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    /// Exponential with the given mean (inter-arrival times of a Poisson process).
    mutating func exponential(mean: Double) -> Double {
        -mean * log1p(-unit())
    }

    /// Log-normal with the given median and shape sigma (Box-Muller for the normal draw).
    mutating func logNormal(median: Double, sigma: Double) -> Double {
        let u1 = max(unit(), 0x1p-53)
        let u2 = unit()
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return median * exp(sigma * normal)
    }
}
