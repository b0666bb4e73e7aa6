/// An IAB Global Privacy Platform (GPP) v1 string, decoded as far as consent classes need it:
/// the header's section ids, each section's text, and the three sections adloaderd reads itself,
/// TCF EU v2 (id 2, decoded as a ``TCFConsent``), US privacy v1 (id 6, the four-character
/// `us_privacy` string) and US national v1 (id 7, decoded as a ``USNationalSection``). Every
/// other section (the US state ones, TCF Canada, ...) is checked for shape (base64url, or
/// `.`-separated base64url segments) and kept as text.
///
/// The string is `HEADER~SECTION~SECTION…`, one section per header id, in the header's order.
/// The header is base64url bits: Type (6 bits, 3), Version (6 bits, 1), then the section ids as
/// a Fibonacci integer range (a 12-bit count of entries, each a 1-bit "is a range" flag and one
/// or two Fibonacci-coded offsets from the previous id).
///
/// Pure and bounded: a string longer than ``maximumLength`` is refused before decoding, at most
/// ``maximumSections`` ids are read, and an id above ``maximumSectionID`` is refused (the IAB's
/// ids are below 30), so no input allocates or loops beyond those.
public struct GPPString: Hashable, Sendable {
    /// As ``TCFConsent/maximumLength``: a GPP string is a TCF string and a few short sections.
    public static let maximumLength = TCFConsent.maximumLength
    /// The most section ids a header may list.
    public static let maximumSections = 64
    /// The highest section id accepted.
    public static let maximumSectionID = 1_000
    /// Section 2: TCF EU v2.
    public static let tcfEUv2 = 2
    /// Section 6: US privacy v1 (the CCPA string, deprecated for the US national section 7).
    public static let usPrivacyV1 = 6
    /// Section 7: US national v1 (`usnat`).
    public static let usNationalV1 = 7

    /// The header's Version (1).
    public var version: Int
    /// The section ids of the header, ascending.
    public var sectionIDs: [Int]
    /// Each section's text, by id.
    public var sections: [Int: String]
    /// Section 2 decoded, when present.
    public var tcfConsent: TCFConsent?
    /// Section 7 decoded, when present.
    public var usNational: USNationalSection?

    /// Why a string does not decode.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    /// The text of section `id`; nil when the string has none.
    public func section(_ id: Int) -> String? { sections[id] }

    /// Section 6's US privacy string ("1YNN"), when present.
    public var usPrivacy: String? { sections[Self.usPrivacyV1] }

    /// Decodes `string`.
    /// - Throws: ``DecodingError`` naming what is wrong: empty, too long, a header that is not
    ///   base64url, of another type or version, cut short, ids out of order, too many or too
    ///   large, a count of sections that differs from the header's, or a section that does not
    ///   decode (TCF EU v2 with the TCF decoder's reason, US privacy not "1" and three of Y, N, -,
    ///   US national with ``USNationalSection``'s).
    public init(decoding string: String) throws(DecodingError) {
        if string.isEmpty { throw DecodingError("empty") }
        if string.utf8.count > Self.maximumLength {
            throw DecodingError("longer than \(Self.maximumLength) bytes (\(string.utf8.count))")
        }
        let parts = string.utf8.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false)
        var header: TCFConsent.BitReader
        do {
            header = try TCFConsent.bits(of: parts[0], segment: 1)
        } catch {
            throw DecodingError("header: \(error.message)")
        }
        let type: Int
        do {
            type = try header.int(6, "Type")
            version = try header.int(6, "Version")
        } catch {
            throw DecodingError("header: \(error.message)")
        }
        guard type == 3 else { throw DecodingError("header: Type \(type), a GPP header is 3") }
        guard version == 1 else { throw DecodingError("header: Version \(version), only GPP v1 is decoded") }
        sectionIDs = try Self.sectionIDs(&header)
        guard parts.count - 1 == sectionIDs.count else {
            throw DecodingError(
                "the header lists \(sectionIDs.count) section(s) (\(sectionIDs.map(String.init).joined(separator: ","))) but \(parts.count - 1) follow"
            )
        }
        sections = [:]
        tcfConsent = nil
        usNational = nil
        for (id, part) in zip(sectionIDs, parts.dropFirst()) {
            let text = String(decoding: part, as: UTF8.self)
            if part.isEmpty { throw DecodingError("section \(id) is empty") }
            switch id {
            case Self.tcfEUv2:
                do {
                    tcfConsent = try TCFConsent(decoding: text)
                } catch {
                    throw DecodingError("section 2 (TCF EU v2): \(error.message)")
                }
            case Self.usPrivacyV1:
                let bytes = Array(part)
                let allowed: [UInt8] = [UInt8(ascii: "Y"), UInt8(ascii: "N"), UInt8(ascii: "-")]
                guard bytes.count == 4, bytes[0] == UInt8(ascii: "1"), bytes[1...].allSatisfy(allowed.contains) else {
                    throw DecodingError("section 6 (US privacy v1): \"\(text.prefix(16))\" is not such as \"1YNN\"")
                }
            case Self.usNationalV1:
                do {
                    usNational = try USNationalSection(decoding: text)
                } catch {
                    throw DecodingError("section 7 (US national v1): \(error.message)")
                }
            default:
                for (index, segment) in part.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
                    .enumerated()
                {
                    do {
                        _ = try TCFConsent.bits(of: segment, segment: index + 1)
                    } catch {
                        throw DecodingError("section \(id): \(error.message)")
                    }
                }
            }
            sections[id] = text
        }
    }

    /// The header's Fibonacci integer range of section ids.
    private static func sectionIDs(_ header: inout TCFConsent.BitReader) throws(DecodingError) -> [Int] {
        let count: Int
        do { count = try header.int(12, "NumberOfSections") } catch { throw DecodingError("header: \(error.message)") }
        var ids: [Int] = []
        var last = 0
        for index in 0..<count {
            let isRange: Bool
            do { isRange = try header.bool("section entry \(index) IsARange") } catch {
                throw DecodingError("header: \(error.message)")
            }
            let offset = try fibonacci(&header, "section entry \(index)")
            let start = last + offset
            var end = start
            if isRange {
                let length = try fibonacci(&header, "section entry \(index) end")
                end = start + length
            }
            guard end <= maximumSectionID else {
                throw DecodingError("header: section id \(end) above \(maximumSectionID)")
            }
            guard ids.count + (end - start + 1) <= maximumSections else {
                throw DecodingError("header: more than \(maximumSections) sections")
            }
            ids.append(contentsOf: start...end)
            last = end
        }
        return ids
    }

    /// One Fibonacci-coded integer (Zeckendorf bits, lowest first, ended by "11"): at least 1.
    private static func fibonacci(_ header: inout TCFConsent.BitReader, _ field: String) throws(DecodingError) -> Int {
        var value = 0
        var (current, next) = (1, 2)
        var previousBit = false
        // F(30) > maximumSectionID: a longer code is refused before it can overflow.
        for _ in 0..<30 {
            let bit: Bool
            do { bit = try header.bool(field) } catch { throw DecodingError("header: \(error.message)") }
            if bit && previousBit { return value }
            if bit { value += current }
            previousBit = bit
            (current, next) = (next, current + next)
        }
        throw DecodingError("header: \(field) is a Fibonacci code of more than 30 bits")
    }
}
