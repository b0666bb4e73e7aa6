/// Hands out the ad and lease ids of one loader instance.
///
/// Ad ids read `<idSeed hex>-<counter>`. A lease id is 64 bits: the top 12 are the lending
/// replica's index (``replica``, 0 outside a fleet), the low 52 a bijective scramble of the
/// lease's slot in the ``LeaseTable`` (32 bits) and that slot's generation (20 bits: how many
/// leases it held before), so the table finds a lease from its id without a dictionary, and a
/// replica that gets another's id can say whose it is. The table never gives a slot the same
/// generation twice, so ids are unique within the instance; it skips the one that would
/// scramble to 0; ids differ between seeds.
struct IdentifierGenerator {
    private let prefix: String
    private let leaseKey: UInt64
    /// The replica index in the top bits of every lease id (0...``maximumReplica``).
    var replica: Int = 0
    /// Bits of a lease id below the replica index.
    static let replicaShift = UInt64(LeaseReplica.leaseIDShift)
    static let maximumReplica = 4_095
    /// A slot's generations: 2^20; the table retires a slot before it would wrap.
    static let generationLimit: UInt32 = 1 << 20
    private static let lowMask: UInt64 = (1 << 52) - 1
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

    /// Notes the id of an ad restored from a snapshot: when it is one of this seed's ids, the
    /// counter moves past it, so no ad loaded from now on gets the same id.
    mutating func noteRestored(adID: String) {
        guard adID.hasPrefix(prefix), let counter = UInt64(adID.dropFirst(prefix.count)) else { return }
        if counter > adCounter { adCounter = counter }
    }

    /// A fresh ad sequence number without an ad id (a restored ad keeps its own id): restored
    /// ads keep their snapshot's order on expiry ties, and come before ads loaded later.
    mutating func nextRestoredSequence() -> UInt64 {
        adCounter += 1
        return adCounter
    }

    /// Ad sequence numbers break expiry ties in favour of the ad loaded first.
    var lastAdSequence: UInt64 { adCounter }

    /// The id of the lease in table slot `slot` (below 2^32) at `generation` (below
    /// ``generationLimit``); 0 for exactly one (slot, generation) pair of a seed when
    /// ``replica`` is 0, which the table never uses.
    func leaseID(slot: Int, generation: UInt32) -> UInt64 {
        let encoded = UInt64(generation & (Self.generationLimit - 1)) << 32 | UInt64(UInt32(truncatingIfNeeded: slot))
        // Odd multiplier, xor and a 52-bit xorshift-multiply finaliser: a bijection on the
        // low 52 bits, so no repeats.
        let scrambled = Self.mix52(((encoded &* Self.leaseMultiplier) ^ leaseKey) & Self.lowMask)
        return UInt64(replica) << Self.replicaShift | scrambled
    }

    /// The slot and generation a lease id was made from (any id decodes to some pair; the
    /// table checks that the slot holds a lease with exactly this id).
    func leaseSlot(of id: UInt64) -> (slot: Int, generation: UInt32) {
        let encoded = ((Self.unmix52(id & Self.lowMask) ^ leaseKey) &* Self.leaseMultiplierInverse) & Self.lowMask
        return (Int(encoded & 0xFFFF_FFFF), UInt32(truncatingIfNeeded: encoded >> 32))
    }

    /// The replica index a lease id carries (its top 12 bits).
    static func replica(of id: UInt64) -> Int { Int(id >> replicaShift) }

    private static let m1: UInt64 = 0xBF58_476D_1CE4_E5B9
    private static let m2: UInt64 = 0x94D0_49BB_1331_11EB
    private static let m1Inverse = inverse(m1)
    private static let m2Inverse = inverse(m2)

    /// The multiplicative inverse of odd `a` modulo 2^64 (Newton's iteration).
    private static func inverse(_ a: UInt64) -> UInt64 {
        var x = a
        for _ in 0..<6 { x = x &* (2 &- a &* x) }
        return x
    }

    private static func mix52(_ value: UInt64) -> UInt64 {
        var z = value
        z = ((z ^ (z >> 26)) &* m1) & lowMask
        z = ((z ^ (z >> 23)) &* m2) & lowMask
        return z ^ (z >> 27)
    }

    private static func unmix52(_ value: UInt64) -> UInt64 {
        var z = unshift(value, 27)
        z = unshift((z &* m2Inverse) & lowMask, 23)
        z = unshift((z &* m1Inverse) & lowMask, 26)
        return z
    }

    /// Undoes `z ^ (z >> k)` on 52 bits.
    private static func unshift(_ y: UInt64, _ k: UInt64) -> UInt64 {
        var x = y
        var shift = k
        while shift < 52 {
            x = y ^ (x >> k)
            shift += k
        }
        return x & lowMask
    }
}
