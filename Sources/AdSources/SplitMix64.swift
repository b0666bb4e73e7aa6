/// A small, fast, seedable pseudo-random generator (SplitMix64, Steele, Lea and Flood 2014).
///
/// The synthetic source uses it instead of the system generator so that a seed reproduces the
/// same ads on every platform and toolchain: the helpers below do their own range reduction
/// rather than relying on the standard library's `random(in:using:)` algorithms.
struct SplitMix64: RandomNumberGenerator, Sendable {
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

    /// A uniform value in [0, 1) with 53 random bits.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability` (0 never, 1 always).
    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// A uniform integer in `0..<bound`; `bound` must be positive. Multiply-shift reduction,
    /// whose bias is below 2^-50 for the small bounds used here.
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// One element of a non-empty array.
    mutating func pick<T>(_ elements: [T]) -> T {
        elements[below(elements.count)]
    }
}
