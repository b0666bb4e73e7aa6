#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64 (Steele, Lea and Flood 2014): the benchmark's own seeded generator, so a seed
/// replays the same traces on every platform and toolchain.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// Uniform in `range` (closed, small ranges).
    mutating func integer(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next().multipliedFullWidth(by: UInt64(range.count)).high)
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
