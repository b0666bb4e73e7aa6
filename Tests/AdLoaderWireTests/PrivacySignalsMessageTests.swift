import AdLoaderCore
import Testing

@testable import AdLoaderWire

@Suite struct PrivacySignalsMessageTests {
    static let full = PrivacySignalsMessage(
        gdpr: 1, tcfConsent: TCFConsent(purposesConsent: [1, 2]).encoded, gpp: "DBABLA~BVVqAAEABgA.QA",
        gppSectionIDs: [7, 8, 300], usPrivacy: "1YNN", coppa: true, limitAdTracking: true, attStatus: 3)

    @Test(arguments: [nil, PrivacySignalsMessage(), full])
    func borrowAndPrefetchCarryTheSignalsOnBothDecoders(privacy: PrivacySignalsMessage?) throws {
        let borrow = BorrowRequestMessage(adUnitID: "u", loader: "l", slot: "s", waitMilliseconds: 5, privacy: privacy)
        var bytes: [UInt8] = []
        borrow.encode(into: &bytes)
        let inPlace = try bytes.withUnsafeBytes { try BorrowRequestMessage(decoding: $0) }
        let viaC = try bytes.withUnsafeBytes { try BorrowRequestMessage(protobufC: $0) }
        #expect(inPlace == borrow && viaC == borrow)
        let prefetch = PrefetchRequestMessage(adUnitID: "u", count: 2, privacy: privacy)
        var prefetchBytes: [UInt8] = []
        prefetch.encode(into: &prefetchBytes)
        #expect(try prefetchBytes.withUnsafeBytes { try PrefetchRequestMessage(decoding: $0) } == prefetch)
    }

    /// protobuf-c merges a message field sent twice; the in-place decoder does the same.
    @Test func aRepeatedSignalsFieldMergesLikeProtobufC() throws {
        var first: [UInt8] = []
        BorrowRequestMessage(adUnitID: "u", privacy: PrivacySignalsMessage(gppSectionIDs: [1], usPrivacy: "1YNN"))
            .encode(into: &first)
        var second: [UInt8] = []
        BorrowRequestMessage(adUnitID: "u", privacy: PrivacySignalsMessage(gppSectionIDs: [2], coppa: true)).encode(
            into: &second)
        let bytes = first + second
        let inPlace = try bytes.withUnsafeBytes { try BorrowRequestMessage(decoding: $0) }
        let viaC = try bytes.withUnsafeBytes { try BorrowRequestMessage(protobufC: $0) }
        #expect(inPlace == viaC)
        #expect(inPlace.privacy == PrivacySignalsMessage(gppSectionIDs: [1, 2], usPrivacy: "1YNN", coppa: true))
    }

    @Test func signalsMapToTheCoreAndUnknownEnumsAreRefused() throws {
        let signals = try Self.full.signals()
        #expect(signals.gdprApplies == true && signals.trackingAuthorization == .denied)
        #expect(PrivacySignalsMessage(signals) == Self.full)
        #expect(try PrivacySignalsMessage(gdpr: 2).signals().gdprApplies == false)
        #expect(try PrivacySignalsMessage(attStatus: 1).signals().trackingAuthorization == .notDetermined)
        #expect(throws: FrameError.self) { try PrivacySignalsMessage(gdpr: 3).signals() }
        #expect(throws: FrameError.self) { try PrivacySignalsMessage(attStatus: 5).signals() }
        #expect(throws: FrameError.self) { try PrivacySignalsMessage(attStatus: -1).signals() }
    }

    /// Truncations and random bytes: both decoders agree on success and on the value.
    @Test func truncationsAndGarbageAgreeWithProtobufC() {
        var bytes: [UInt8] = []
        BorrowRequestMessage(adUnitID: "u", privacy: Self.full).encode(into: &bytes)
        var generator = SplitMix64Generator(seed: 7)
        var cases: [[UInt8]] = (0...bytes.count).map { Array(bytes.prefix($0)) }
        for _ in 0..<3000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            cases.append(mutated)
        }
        for candidate in cases {
            let a = candidate.withUnsafeBytes { try? BorrowRequestMessage(decoding: $0) }
            let b = candidate.withUnsafeBytes { try? BorrowRequestMessage(protobufC: $0) }
            #expect(a == b, "\(candidate)")
        }
    }
}

struct SplitMix64Generator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
