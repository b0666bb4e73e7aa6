/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, fast, well-mixed seedable generator
/// whose whole state is one `UInt64`.
///
/// The project's one seeded generator: the core's ids and retry jitter, the synthetic source,
/// benchmarks and tests use it so that a seed replays the same values on every platform and
/// toolchain. Its helpers do their own range reduction rather than relying on the standard
/// library's `random(in:using:)` algorithms, which may change between releases.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A uniform value in [0, 1) with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability` (0 never, 1 always).
    public mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// A uniform integer in `0..<bound`; `bound` must be positive. Multiply-shift reduction,
    /// whose bias is below 2^-50 for small bounds.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ elements: [T]) -> T {
        elements[below(elements.count)]
    }

    /// The SplitMix64 finaliser; a bijection on `UInt64`.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The inverse of ``mix(_:)``: `unmix(mix(x)) == x` for every `x`.
    static func unmix(_ value: UInt64) -> UInt64 {
        // Each `z ^= z >> s` is undone by xoring the shifts s, 2s, ... back in; each odd
        // multiplier by its inverse modulo 2^64.
        var z = value
        z = z ^ (z >> 31) ^ (z >> 62)
        z = z &* 0x3196_42B2_D24D_8EC3
        z = z ^ (z >> 27) ^ (z >> 54)
        z = z &* 0x96DE_1B17_3F11_9089
        return z ^ (z >> 30) ^ (z >> 60)
    }
}
