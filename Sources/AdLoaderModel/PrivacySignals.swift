/// The privacy signals a caller passes with a demand call (Borrow, Prefetch, AppOpen, and any
/// later call that lends ads): what the device's user granted, as the app's consent platform
/// and the OS report it. Every field is optional; a call without signals belongs to its
/// loader's default consent class (``ConsentPolicy/defaultClass``).
///
/// The loader never forwards these upstream: it maps them to one of a few consent classes
/// (``ConsentPolicy/classify(_:)``) and an ad bought for a class carries only that class's
/// configured terms (``ConsentTerms``). A pooled ad is bought before its user is known.
public struct PrivacySignals: Hashable, Sendable {
    /// iOS App Tracking Transparency status, as `ATTrackingManager.AuthorizationStatus`'s raw values.
    public enum TrackingAuthorization: UInt32, Hashable, Sendable, CaseIterable {
        case notDetermined = 0
        case restricted = 1
        case denied = 2
        case authorized = 3

        public var name: String {
            switch self {
            case .notDetermined: "notDetermined"
            case .restricted: "restricted"
            case .denied: "denied"
            case .authorized: "authorized"
            }
        }
    }

    /// Whether the GDPR applies to this user; nil: not said.
    public var gdprApplies: Bool?
    /// The IAB TCF v2 consent string (the app's `IABTCF_TCString`); empty: none.
    public var tcfConsent: String
    /// The IAB GPP string; empty: none.
    public var gpp: String
    /// The GPP section ids that apply (`IABGPP_GppSID`).
    public var gppSectionIDs: [UInt32]
    /// The IAB US privacy (CCPA) string, e.g. "1YNN"; empty: none.
    public var usPrivacy: String
    /// The user is a child (COPPA).
    public var coppa: Bool
    /// The OS's limit-ad-tracking flag.
    public var limitAdTracking: Bool
    /// The iOS ATT status; nil: not said (not an iOS device, or not asked).
    public var trackingAuthorization: TrackingAuthorization?

    public init(
        gdprApplies: Bool? = nil, tcfConsent: String = "", gpp: String = "", gppSectionIDs: [UInt32] = [],
        usPrivacy: String = "", coppa: Bool = false, limitAdTracking: Bool = false,
        trackingAuthorization: TrackingAuthorization? = nil
    ) {
        self.gdprApplies = gdprApplies
        self.tcfConsent = tcfConsent
        self.gpp = gpp
        self.gppSectionIDs = gppSectionIDs
        self.usPrivacy = usPrivacy
        self.coppa = coppa
        self.limitAdTracking = limitAdTracking
        self.trackingAuthorization = trackingAuthorization
    }

    /// Limited ad tracking in Prebid Server's sense: LMT set, or ATT restricted or denied.
    public var isTrackingLimited: Bool {
        limitAdTracking || trackingAuthorization == .restricted || trackingAuthorization == .denied
    }

    /// The US privacy string says the user opted out of sale ("1?Y?": its third character is Y).
    public var optsOutOfSale: Bool {
        let bytes = Array(usPrivacy.utf8)
        return bytes.count == 4 && (bytes[2] == UInt8(ascii: "Y") || bytes[2] == UInt8(ascii: "y"))
    }
}
