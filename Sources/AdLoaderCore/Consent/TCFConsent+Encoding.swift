extension TCFConsent {
    /// A consent with everything unset but what is given: for tests, examples and the
    /// operator's tools that write a class's `consentString`.
    public init(
        purposesConsent: Set<Int>, specialFeatureOptIns: Set<Int> = [], vendorConsents: [Int] = [],
        cmpID: Int = 2, created: UInt64 = 16_000_000_000, vendorListVersion: Int = 100
    ) {
        version = 2
        self.created = created
        lastUpdated = created
        self.cmpID = cmpID
        cmpVersion = 1
        consentScreen = 1
        consentLanguage = "en"
        self.vendorListVersion = vendorListVersion
        policyVersion = 4
        isServiceSpecific = true
        useNonStandardTexts = false
        self.specialFeatureOptIns = specialFeatureOptIns
        self.purposesConsent = purposesConsent
        purposesLegitimateInterest = []
        purposeOneTreatment = false
        publisherCountryCode = "AA"
        var vendors = VendorSet(maximumID: vendorConsents.max() ?? 0)
        for id in vendorConsents where id >= 1 { vendors.insert(id) }
        self.vendorConsents = vendors
        vendorLegitimateInterests = VendorSet()
    }

    /// The core segment, base64url without padding: vendor sections as bit fields, no
    /// publisher restrictions. ``init(decoding:)`` reads it back to an equal value.
    public var encoded: String {
        var writer = BitWriter()
        writer.write(UInt64(version), 6)
        writer.write(created, 36)
        writer.write(lastUpdated, 36)
        writer.write(UInt64(cmpID), 12)
        writer.write(UInt64(cmpVersion), 12)
        writer.write(UInt64(consentScreen), 6)
        writer.letters(consentLanguage, base: UInt8(ascii: "a"))
        writer.write(UInt64(vendorListVersion), 12)
        writer.write(UInt64(policyVersion), 6)
        writer.write(isServiceSpecific ? 1 : 0, 1)
        writer.write(useNonStandardTexts ? 1 : 0, 1)
        for bit in 1...12 { writer.write(specialFeatureOptIns.contains(bit) ? 1 : 0, 1) }
        for bit in 1...24 { writer.write(purposesConsent.contains(bit) ? 1 : 0, 1) }
        for bit in 1...24 { writer.write(purposesLegitimateInterest.contains(bit) ? 1 : 0, 1) }
        writer.write(purposeOneTreatment ? 1 : 0, 1)
        writer.letters(publisherCountryCode, base: UInt8(ascii: "A"))
        for vendors in [vendorConsents, vendorLegitimateInterests] {
            writer.write(UInt64(vendors.maximumID), 16)
            writer.write(0, 1)  // a bit field
            if vendors.maximumID > 0 {
                for id in 1...vendors.maximumID { writer.write(vendors.contains(id) ? 1 : 0, 1) }
            }
        }
        writer.write(0, 12)  // no publisher restrictions
        return writer.base64URL
    }

    struct BitWriter {
        var bits: [Bool] = []

        mutating func write(_ value: UInt64, _ width: Int) {
            for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> UInt64(shift)) & 1 == 1) }
        }

        mutating func letters(_ text: String, base: UInt8) {
            let bytes = Array(text.utf8)
            for index in 0..<2 {
                let byte = index < bytes.count ? bytes[index] : base
                write(UInt64(byte >= base ? min(byte - base, 25) : 0), 6)
            }
        }

        var base64URL: String {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            var out: [UInt8] = []
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
            return String(decoding: out, as: UTF8.self)
        }
    }
}
