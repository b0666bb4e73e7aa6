import AdLoaderCore
import Testing

@Suite struct TCFConsentTests {
    @Test func roundTripsPurposesFeaturesAndVendors() throws {
        let consent = TCFConsent(
            purposesConsent: [1, 2, 7, 24], specialFeatureOptIns: [1], vendorConsents: [1, 52, 755, 1000])
        let string = consent.encoded
        #expect(string.hasPrefix("C"))  // version 2 in the first six bits
        let decoded = try TCFConsent(decoding: string)
        #expect(decoded == consent)
        #expect(decoded.purposesConsent == [1, 2, 7, 24])
        #expect(decoded.specialFeatureOptIns == [1])
        #expect(decoded.vendorConsents.contains(755) && !decoded.vendorConsents.contains(754))
        #expect(decoded.vendorConsents.count == 4)
        #expect(decoded.consentLanguage == "en" && decoded.publisherCountryCode == "AA")
    }

    /// A range-encoded vendor section, written bit by bit as the spec lays it out.
    @Test func decodesRangeEncodedVendors() throws {
        var bits = Bits()
        bits.header(purposes: [1, 2])
        bits.put(300, 16)  // MaxVendorId
        bits.put(1, 1)  // IsRangeEncoding
        bits.put(2, 12)  // NumEntries
        bits.put(0, 1)
        bits.put(5, 16)  // vendor 5
        bits.put(1, 1)
        bits.put(60, 16)
        bits.put(300, 16)  // vendors 60...300
        bits.put(0, 16)
        bits.put(0, 1)  // no vendor legitimate interests
        bits.put(0, 12)  // no publisher restrictions
        let decoded = try TCFConsent(decoding: bits.string)
        #expect(decoded.vendorConsents.count == 1 + 241)
        #expect(
            decoded.vendorConsents.contains(5) && decoded.vendorConsents.contains(60)
                && decoded.vendorConsents.contains(300))
        #expect(!decoded.vendorConsents.contains(6) && !decoded.vendorConsents.contains(59))
    }

    /// 4,095 ranges of every vendor: bounded work (word writes), not 268 M bit writes.
    @Test func decodesTheLargestRangeSectionQuickly() throws {
        var bits = Bits()
        bits.header(purposes: [2])
        bits.put(65_535, 16)
        bits.put(1, 1)
        bits.put(4095, 12)
        for _ in 0..<4095 {
            bits.put(1, 1)
            bits.put(1, 16)
            bits.put(65_535, 16)
        }
        bits.put(0, 16)
        bits.put(0, 1)
        bits.put(0, 12)
        let decoded = try TCFConsent(decoding: bits.string)
        #expect(decoded.vendorConsents.count == 65_535)
    }

    @Test(arguments: [
        ("", "empty"),
        ("C!", "not base64url"),
        ("BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA", "version 1"),
        ("CPc", "cut short in Created"),
        ("CAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "cut short in"),
        ("C" + String(repeating: "A", count: TCFConsent.maximumLength), "longer than"),
        (TCFConsent(purposesConsent: [2]).encoded + "..", "is empty"),
        (TCFConsent(purposesConsent: [2]).encoded + ".A", "unknown SegmentType 0"),
    ])
    func refusesGarbage(string: String, expected: String) {
        #expect {
            _ = try TCFConsent(decoding: string)
        } throws: { error in
            (error as? TCFConsent.DecodingError)?.message.contains(expected) == true
        }
    }

    @Test func refusesAVendorRangeOutOfBounds() {
        var bits = Bits()
        bits.header(purposes: [2])
        bits.put(10, 16)
        bits.put(1, 1)
        bits.put(1, 12)
        bits.put(1, 1)
        bits.put(8, 16)
        bits.put(11, 16)  // beyond MaxVendorId
        #expect(throws: TCFConsent.DecodingError.self) { try TCFConsent(decoding: bits.string) }
        var backwards = Bits()
        backwards.header(purposes: [2])
        backwards.put(10, 16)
        backwards.put(1, 1)
        backwards.put(1, 12)
        backwards.put(1, 1)
        backwards.put(9, 16)
        backwards.put(3, 16)
        #expect {
            try TCFConsent(decoding: backwards.string)
        } throws: { ($0 as? TCFConsent.DecodingError)?.message.contains("ends before it starts") == true }
    }

    /// Every prefix of a valid string fails cleanly (or decodes), never traps.
    @Test func everyTruncationFailsCleanly() {
        let string = TCFConsent(purposesConsent: [1, 2, 3], vendorConsents: [1, 2, 100]).encoded
        for length in 0..<string.count {
            _ = try? TCFConsent(decoding: String(string.prefix(length)))
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        for _ in 0..<2000 {
            let length = Int.random(in: 1...120, using: &generator)
            _ = try? TCFConsent(
                decoding: "C" + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
    }

    @Test func vendorSetSuperset() {
        let all = TCFConsent(purposesConsent: [2], vendorConsents: Array(1...200)).vendorConsents
        let some = TCFConsent(purposesConsent: [2], vendorConsents: [3, 150]).vendorConsents
        let other = TCFConsent(purposesConsent: [2], vendorConsents: [3, 201]).vendorConsents
        #expect(all.isSuperset(of: some))
        #expect(!some.isSuperset(of: all))
        #expect(!all.isSuperset(of: other))
    }
}

/// Writes TCF fields bit by bit (the spec's layout), for strings the encoder does not write.
struct Bits {
    var bits: [Bool] = []

    mutating func put(_ value: Int, _ width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    /// Everything up to the vendor consent section.
    mutating func header(purposes: Set<Int>) {
        put(2, 6)
        put(1, 36)
        put(1, 36)
        put(7, 12)
        put(1, 12)
        put(1, 6)
        put(4, 6)
        put(13, 6)  // "en"
        put(50, 12)
        put(2, 6)
        put(0, 1)
        put(0, 1)
        put(0, 12)
        for purpose in 1...24 { put(purposes.contains(purpose) ? 1 : 0, 1) }
        put(0, 24)
        put(0, 1)
        put(0, 6)
        put(0, 6)
    }

    var string: String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var out = ""
        var index = 0
        while index < bits.count {
            var value = 0
            for offset in 0..<6 {
                value <<= 1
                if index + offset < bits.count && bits[index + offset] { value |= 1 }
            }
            out.append(alphabet[value])
            index += 6
        }
        return out
    }
}
