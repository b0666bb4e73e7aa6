/// Hands out the ad and lease ids of one loader instance.
///
/// Ad ids read `<idSeed hex>-<counter>`; lease ids are a bijective scramble of the lease's
/// slot in the ``LeaseTable`` and that slot's generation (how many leases it held before), so
/// the table finds a lease from its id without a dictionary. The table never gives a slot the
/// same generation twice, so ids are unique within the instance; it skips the one that would
/// scramble to 0; ids differ between seeds.
struct IdentifierGenerator {
    private let prefix: String
    private let leaseKey: UInt64
    private var adCounter: UInt64 = 0
    /// Odd, so multiplying by it is a bijection; `leaseMultiplierInverse` undoes it.
    private static let leaseMultiplier: UInt64 = 0xD1B5_4A32_D192_ED03
    private static let leaseMultiplierInverse: UInt64 = 0x0610_6CCF_A448_E5AB

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

    /// The id of the lease in table slot `slot` (below 2^32) at `generation`; 0 for exactly
    /// one (slot, generation) pair of a seed, which the table never uses.
    func leaseID(slot: Int, generation: UInt32) -> UInt64 {
        let encoded = UInt64(generation) << 32 | UInt64(UInt32(truncatingIfNeeded: slot))
        // Odd multiplier, xor and SplitMix64's finaliser: a bijection, so no repeats.
        return SplitMix64.mix((encoded &* Self.leaseMultiplier) ^ leaseKey)
    }

    /// The slot and generation a lease id was made from (any id decodes to some pair; the
    /// table checks that the slot holds a lease with exactly this id).
    func leaseSlot(of id: UInt64) -> (slot: Int, generation: UInt32) {
        let encoded = (SplitMix64.unmix(id) ^ leaseKey) &* Self.leaseMultiplierInverse
        return (Int(encoded & 0xFFFF_FFFF), UInt32(truncatingIfNeeded: encoded >> 32))
    }
}
