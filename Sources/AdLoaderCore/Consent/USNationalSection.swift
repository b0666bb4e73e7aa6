/// GPP section 7, the US national privacy section (`usnat`) v1, decoded: its core segment and,
/// when present, its GPC segment.
///
/// The section is `CORE[.GPC]`, each segment base64url without padding, bits most significant
/// first. The core is Version (6 bits, 1), then 2-bit fields (0 not applicable, 1 yes / opted
/// out, 2 no / did not opt out): SharingNotice, SaleOptOutNotice, SharingOptOutNotice,
/// TargetedAdvertisingOptOutNotice, SensitiveDataProcessingOptOutNotice,
/// SensitiveDataLimitUseNotice, SaleOptOut, SharingOptOut, TargetedAdvertisingOptOut,
/// SensitiveDataProcessing (a list of 2-bit values), KnownChildSensitiveDataConsents (a list),
/// PersonalDataConsents, MspaCoveredTransaction, MspaOptOutOptionMode, MspaServiceProviderMode.
/// The lists are 12 and 2 long in a core of 60 bits (10 or 11 characters: the first release)
/// and 16 and 3 long in one of 70 bits or more (12 characters: the release that added DE, IA,
/// NE, NH, NJ and TN), as IAB's reference implementation reads them; both have Version 1. The
/// GPC segment is SegmentType (2 bits, 1) and Gpc (1 bit).
///
/// A 2-bit value of 3 (undefined) is kept as read: only ``optsOut`` interprets values.
public struct USNationalSection: Hashable, Sendable {
    public var version: Int
    public var sharingNotice: Int
    public var saleOptOutNotice: Int
    public var sharingOptOutNotice: Int
    public var targetedAdvertisingOptOutNotice: Int
    public var sensitiveDataProcessingOptOutNotice: Int
    public var sensitiveDataLimitUseNotice: Int
    public var saleOptOut: Int
    public var sharingOptOut: Int
    public var targetedAdvertisingOptOut: Int
    /// 12 values (first release) or 16.
    public var sensitiveDataProcessing: [Int]
    /// 2 values (first release) or 3.
    public var knownChildSensitiveDataConsents: [Int]
    public var personalDataConsents: Int
    public var mspaCoveredTransaction: Int
    public var mspaOptOutOptionMode: Int
    public var mspaServiceProviderMode: Int
    /// The GPC segment's Gpc; nil when the section has no GPC segment.
    public var gpc: Bool?

    /// The user opted out of the sale or sharing of their data or of targeted advertising
    /// (SaleOptOut, SharingOptOut or TargetedAdvertisingOptOut is 1): no personalised ads, as
    /// Prebid Server reads it.
    public var optsOut: Bool { saleOptOut == 1 || sharingOptOut == 1 || targetedAdvertisingOptOut == 1 }

    /// Decodes a section 7 text.
    /// - Throws: ``GPPString/DecodingError`` naming what is wrong: an empty segment, a byte that is
    ///   not base64url, a Version other than 1, a core cut short (the field it ends in), more than
    ///   two segments, or a GPC segment of another type or cut short.
    public init(decoding text: String) throws(GPPString.DecodingError) {
        let segments = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count <= 2 else {
            throw GPPString.DecodingError("\(segments.count) segments, a US national section has at most 2")
        }
        do {
            var core = try TCFConsent.bits(of: segments[0], segment: 1)
            version = try core.int(6, "Version")
            guard version == 1 else {
                throw GPPString.DecodingError("Version \(version), only US national v1 is decoded")
            }
            // The second release's lists are longer: its core is 70 bits, the first's 60.
            let (sensitive, children) = core.bitCount >= 70 ? (16, 3) : (12, 2)
            sharingNotice = try core.int(2, "SharingNotice")
            saleOptOutNotice = try core.int(2, "SaleOptOutNotice")
            sharingOptOutNotice = try core.int(2, "SharingOptOutNotice")
            targetedAdvertisingOptOutNotice = try core.int(2, "TargetedAdvertisingOptOutNotice")
            sensitiveDataProcessingOptOutNotice = try core.int(2, "SensitiveDataProcessingOptOutNotice")
            sensitiveDataLimitUseNotice = try core.int(2, "SensitiveDataLimitUseNotice")
            saleOptOut = try core.int(2, "SaleOptOut")
            sharingOptOut = try core.int(2, "SharingOptOut")
            targetedAdvertisingOptOut = try core.int(2, "TargetedAdvertisingOptOut")
            var list: [Int] = []
            for index in 0..<sensitive { list.append(try core.int(2, "SensitiveDataProcessing \(index + 1)")) }
            sensitiveDataProcessing = list
            list = []
            for index in 0..<children { list.append(try core.int(2, "KnownChildSensitiveDataConsents \(index + 1)")) }
            knownChildSensitiveDataConsents = list
            personalDataConsents = try core.int(2, "PersonalDataConsents")
            mspaCoveredTransaction = try core.int(2, "MspaCoveredTransaction")
            mspaOptOutOptionMode = try core.int(2, "MspaOptOutOptionMode")
            mspaServiceProviderMode = try core.int(2, "MspaServiceProviderMode")
            gpc = nil
            if segments.count == 2 {
                var segment = try TCFConsent.bits(of: segments[1], segment: 2)
                let type = try segment.int(2, "SegmentType")
                guard type == 1 else {
                    throw GPPString.DecodingError("segment 2: SegmentType \(type), a GPC segment is 1")
                }
                gpc = try segment.bool("Gpc")
            }
        } catch let error as TCFConsent.DecodingError {
            throw GPPString.DecodingError(error.message)
        } catch let error as GPPString.DecodingError {
            throw error
        } catch {
            throw GPPString.DecodingError("\(error)")
        }
    }
}
