/// SplitMix64: a tiny, fast, well-mixed PRNG whose whole state is one `UInt64`.
///
/// Used for retry jitter and lease ids so that a loader built with the same `idSeed` and
/// driven by the same calls produces the same ids, delays and events.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A uniform value in 0..<1 with 53 bits of precision.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// The SplitMix64 finaliser; a bijection on `UInt64`.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Hands out the ad and lease ids of one loader instance.
///
/// Ad ids read `<idSeed hex>-<counter>`; lease ids are a bijective scramble of a counter, so
/// they are unique within the instance, never 0, and differ between seeds.
struct IdentifierGenerator {
    private let prefix: String
    private let leaseKey: UInt64
    private var adCounter: UInt64 = 0
    private var leaseCounter: UInt64 = 0

    init(seed: UInt64) {
        prefix = String(seed, radix: 16) + "-"
        leaseKey = SplitMix64.mix(seed ^ 0x6C65_6173_6569_6473)
    }

    mutating func nextAdID() -> String {
        adCounter += 1
        return prefix + String(adCounter)
    }

    /// Ad sequence numbers break expiry ties in favour of the ad loaded first.
    var lastAdSequence: UInt64 { adCounter }

    mutating func nextLeaseID() -> UInt64 {
        while true {
            leaseCounter += 1
            // Odd multiplier and xor keep this a bijection of the counter: no repeats.
            let id = SplitMix64.mix((leaseCounter &* 0xD1B5_4A32_D192_ED03) ^ leaseKey)
            if id != 0 { return id }
        }
    }
}
