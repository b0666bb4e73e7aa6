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
