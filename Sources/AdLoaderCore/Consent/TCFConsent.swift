/// An IAB TCF v2 consent string, decoded: the core segment (version, CMP, purposes, special
/// features, vendor consents and legitimate interests). Publisher restrictions and the other
/// segments are checked for shape only.
///
/// Pure and bounded: a string longer than ``maximumLength`` is refused before decoding, a
/// vendor bit field or range list never allocates more than `maxVendorId` bits (at most 65,535).
public struct TCFConsent: Hashable, Sendable {
    /// The longest string decoded (real ones are well under 2 KiB; a vendor bit field of all
    /// 65,535 vendors is 11 KiB of base64).
    public static let maximumLength = 32_768

    public var version: Int
    /// Deciseconds since 1970.
    public var created: UInt64
    public var lastUpdated: UInt64
    public var cmpID: Int
    public var cmpVersion: Int
    public var consentScreen: Int
    /// Two lowercase letters, e.g. "en".
    public var consentLanguage: String
    public var vendorListVersion: Int
    public var policyVersion: Int
    public var isServiceSpecific: Bool
    public var useNonStandardTexts: Bool
    /// Special feature 1 (precise geolocation) is bit 1.
    public var specialFeatureOptIns: Set<Int>
    /// Purposes 1...24 consented (purpose 1: store/access on a device; 2: basic ads).
    public var purposesConsent: Set<Int>
    public var purposesLegitimateInterest: Set<Int>
    public var purposeOneTreatment: Bool
    /// Two uppercase letters.
    public var publisherCountryCode: String
    public var vendorConsents: VendorSet
    public var vendorLegitimateInterests: VendorSet

    /// A set of vendor ids 1...65535, as a bit set.
    public struct VendorSet: Hashable, Sendable {
        public private(set) var maximumID: Int
        private var words: [UInt64]

        public init(maximumID: Int = 0) {
            self.maximumID = maximumID
            self.words = Array(repeating: 0, count: (maximumID + 63) / 64)
        }

        public func contains(_ id: Int) -> Bool {
            guard id >= 1, id <= maximumID else { return false }
            return words[(id - 1) >> 6] & (1 << UInt64((id - 1) & 63)) != 0
        }

        mutating func insert(_ id: Int) {
            words[(id - 1) >> 6] |= 1 << UInt64((id - 1) & 63)
        }

        /// Inserts `start...end` a word at a time: 4,095 ranges of all 65,535 vendors cost
        /// 4,095 × 1,024 word writes, not 268 million bit writes.
        mutating func insert(_ start: Int, through end: Int) {
            var bit = start - 1
            let last = end - 1
            while bit <= last {
                let word = bit >> 6
                let low = bit & 63
                let high = min(63, last - (word << 6))
                let width = high - low + 1
                let mask: UInt64 = width == 64 ? ~0 : ((1 << UInt64(width)) - 1) << UInt64(low)
                words[word] |= mask
                bit = (word + 1) << 6
            }
        }

        public var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

        /// Whether every vendor of `other` is in this set.
        public func isSuperset(of other: VendorSet) -> Bool {
            for (index, word) in other.words.enumerated() where word != 0 {
                guard index < words.count, words[index] & word == word else { return false }
            }
            return true
        }
    }

    /// Why a string does not decode.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    /// Decodes `string`.
    /// - Throws: ``DecodingError`` naming what is wrong: empty, too long, a character outside
    ///   base64url, a segment cut short (naming the field it ends in), a version other than 2, a
    ///   vendor id out of range or a range that ends before it starts.
    public init(decoding string: String) throws(DecodingError) {
        if string.isEmpty { throw DecodingError("empty") }
        if string.utf8.count > Self.maximumLength {
            throw DecodingError("longer than \(Self.maximumLength) bytes (\(string.utf8.count))")
        }
        let segments = string.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        var core = try Self.bits(of: segments[0], segment: 1)
        version = try core.int(6, "Version")
        guard version == 2 else { throw DecodingError("version \(version), only TCF v2 is decoded") }
        created = try core.uint64(36, "Created")
        lastUpdated = try core.uint64(36, "LastUpdated")
        cmpID = try core.int(12, "CmpId")
        cmpVersion = try core.int(12, "CmpVersion")
        consentScreen = try core.int(6, "ConsentScreen")
        consentLanguage = try core.letters("ConsentLanguage", lowercase: true)
        vendorListVersion = try core.int(12, "VendorListVersion")
        policyVersion = try core.int(6, "TcfPolicyVersion")
        isServiceSpecific = try core.bool("IsServiceSpecific")
        useNonStandardTexts = try core.bool("UseNonStandardTexts")
        specialFeatureOptIns = try core.bitSet(12, "SpecialFeatureOptIns")
        purposesConsent = try core.bitSet(24, "PurposesConsent")
        purposesLegitimateInterest = try core.bitSet(24, "PurposesLITransparency")
        purposeOneTreatment = try core.bool("PurposeOneTreatment")
        publisherCountryCode = try core.letters("PublisherCC", lowercase: false)
        vendorConsents = try core.vendorSection("vendor consent")
        vendorLegitimateInterests = try core.vendorSection("vendor legitimate interest")
        let restrictions = try core.int(12, "NumPubRestrictions")
        for index in 0..<restrictions {
            _ = try core.int(6, "PubRestrictions[\(index)].PurposeId")
            _ = try core.int(2, "PubRestrictions[\(index)].RestrictionType")
            try core.rangeEntries(maximumID: 65_535, "PubRestrictions[\(index)]") { _, _ in }
        }
        for (index, segment) in segments.enumerated().dropFirst() {
            var reader = try Self.bits(of: segment, segment: index + 1)
            let type = try reader.int(3, "SegmentType")
            guard (1...3).contains(type) else {
                throw DecodingError("segment \(index + 1): unknown SegmentType \(type)")
            }
        }
    }

    static func bits(of segment: Substring.UTF8View.SubSequence, segment number: Int) throws(DecodingError)
        -> BitReader
    {
        if segment.isEmpty { throw DecodingError("segment \(number) is empty") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(segment.count * 6 / 8 + 1)
        var accumulator: UInt32 = 0
        var held = 0
        var offset = 0
        var sextets = 0
        for character in segment {
            offset += 1
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue  // padding some CMPs add
            default:
                throw DecodingError(
                    "segment \(number): byte \(offset) (0x\(String(character, radix: 16))) is not base64url")
            }
            accumulator = accumulator << 6 | value
            sextets += 1
            held += 6
            if held >= 8 {
                held -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(held)))
            }
        }
        if held > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator << UInt32(8 - held))) }
        return BitReader(bytes: bytes, bitCount: sextets * 6)
    }

    /// Reads big-endian bit fields in order.
    struct BitReader {
        let bytes: [UInt8]
        let bitCount: Int
        var position = 0

        mutating func uint64(_ width: Int, _ field: String) throws(DecodingError) -> UInt64 {
            guard position + width <= bitCount else {
                throw DecodingError("cut short in \(field) (bit \(position) of \(bitCount))")
            }
            var value: UInt64 = 0
            for _ in 0..<width {
                let bit = (bytes[position >> 3] >> UInt8(7 - (position & 7))) & 1
                value = value << 1 | UInt64(bit)
                position += 1
            }
            return value
        }

        mutating func int(_ width: Int, _ field: String) throws(DecodingError) -> Int { Int(try uint64(width, field)) }

        mutating func bool(_ field: String) throws(DecodingError) -> Bool { try uint64(1, field) == 1 }

        mutating func bitSet(_ width: Int, _ field: String) throws(DecodingError) -> Set<Int> {
            var result: Set<Int> = []
            for index in 1...width {
                if try bool(field) { result.insert(index) }
            }
            return result
        }

        mutating func letters(_ field: String, lowercase: Bool) throws(DecodingError) -> String {
            let first = try int(6, field)
            let second = try int(6, field)
            guard first < 26, second < 26 else { throw DecodingError("\(field): \(first),\(second) are not letters") }
            let base = lowercase ? UInt8(ascii: "a") : UInt8(ascii: "A")
            return String(decoding: [base + UInt8(first), base + UInt8(second)], as: UTF8.self)
        }

        mutating func vendorSection(_ name: String) throws(DecodingError) -> VendorSet {
            let maximumID = try int(16, "\(name) MaxVendorId")
            var set = VendorSet(maximumID: maximumID)
            if try bool("\(name) IsRangeEncoding") {
                try rangeEntries(maximumID: maximumID, name) { set.insert($0, through: $1) }
            } else {
                guard position + maximumID <= bitCount else {
                    throw DecodingError(
                        "cut short in \(name) BitField (\(maximumID) bits from bit \(position) of \(bitCount))")
                }
                for id in 0..<maximumID {
                    if try bool("\(name) BitField") { set.insert(id + 1) }
                }
            }
            return set
        }

        mutating func rangeEntries(
            maximumID: Int, _ name: String, _ insert: (_ start: Int, _ end: Int) -> Void
        ) throws(DecodingError) {
            let entries = try int(12, "\(name) NumEntries")
            for index in 0..<entries {
                let isRange = try bool("\(name) entry \(index) IsARange")
                let start = try int(16, "\(name) entry \(index) StartOrOnlyVendorId")
                let end = isRange ? try int(16, "\(name) entry \(index) EndVendorId") : start
                guard start >= 1, end <= maximumID else {
                    throw DecodingError("\(name) entry \(index): vendor \(start)...\(end) outside 1...\(maximumID)")
                }
                guard end >= start else {
                    throw DecodingError("\(name) entry \(index): range \(start)...\(end) ends before it starts")
                }
                insert(start, end)
            }
        }
    }
}
