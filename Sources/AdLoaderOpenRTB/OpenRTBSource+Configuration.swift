public import AdLoaderCore

extension OpenRTBSource {
    /// What one OpenRTB source is configured with: the exchange, limits, and the fields of
    /// every BidRequest it sends. The daemon's `sources.NAME` table (`"type": "openrtb"`) lists
    /// each with its default.
    public struct Configuration: Hashable, Sendable {
        /// Where BidRequests are POSTed, e.g. `https://pbs.example.com/openrtb2/auction`.
        public var endpoint = "http://127.0.0.1:8000/openrtb2/auction"
        /// The whole HTTP exchange; past it the request fails (retryable).
        public var timeout: Duration = .milliseconds(1500)
        /// Connecting (TCP and TLS).
        public var connectTimeout: Duration = .milliseconds(500)
        /// `tmax` sent to the exchange: how long its auction may take.
        public var tmax: Duration = .milliseconds(1000)
        /// BidRequests in flight at once; more wait in order (a warning names this key, at
        /// most once a minute). The default, 256, is far above what the pools' own in-flight
        /// targets need at ten times the feed-scroll trace (about 100 at 1,000 fresh ads/s and
        /// a 210 ms round trip): the request-rate budget, not this, is the brake.
        public var maximumConcurrentRequests = 256
        /// The largest response body accepted.
        public var maximumResponseBytes = 1 << 20
        /// `cur`: the currency bids are wanted in.
        public var currency = "USD"
        /// `test: 1`: the exchange must not bill.
        public var test = false
        /// `imp.bidfloor` in ``currency``; 0 = none sent.
        public var bidFloor: Double = 0
        /// `app.bundle`; when set the request carries `app`, else `site`.
        public var appBundle = ""
        public var appName = ""
        public var appStoreURL = ""
        /// `site.page` and `site.domain` when there is no app bundle.
        public var sitePage = ""
        public var siteDomain = ""
        /// `app.publisher.id` or `site.publisher.id`.
        public var publisherID = ""
        /// `device.ua`, `device.ip`, `device.os`, `device.language`; empty = not sent.
        public var deviceUserAgent = ""
        public var deviceIP = ""
        public var deviceOS = ""
        public var deviceLanguage = ""
        /// `user.id`; not sent for a non-personalized loader.
        public var userID = ""
        /// `regs.coppa: 1`.
        public var coppa = false
        /// `regs.gdpr: 1` (and `regs.ext.gdpr`), with ``gdprConsent`` as `user.consent`.
        public var gdpr = false
        public var gdprConsent = ""
        /// `regs.us_privacy` (and `regs.ext.us_privacy`).
        public var usPrivacy = ""
        /// `regs.gpp` and `regs.gpp_sid`.
        public var gpp = ""
        public var gppSectionIDs: [String] = []
        /// Prebid Server stored request id (`ext.prebid.storedrequest.id`); empty = none.
        public var storedRequestID = ""
        /// Prebid Server stored impression id (`imp.ext.prebid.storedrequest.id`); empty = none.
        public var storedImpressionID = ""
        /// Win, billing and loss notices waiting or in flight; more are dropped and counted.
        public var noticeQueueLimit = 1000
        /// Each notice's HTTP timeout.
        public var noticeTimeout: Duration = .seconds(2)
        /// Notices in flight at once.
        public var noticeConcurrency = 8

        public init() {}

        /// Prefix of the field names in ``validate()``'s errors.
        public static let fieldPrefix = "sources.openrtb"

        /// Checks every field.
        /// - Throws: ``ConfigError`` naming the field, e.g. `sources.openrtb.endpoint`.
        public func validate() throws(ConfigError) {
            func fail(_ field: String, _ message: String) -> ConfigError {
                ConfigError(field: "\(Self.fieldPrefix).\(field)", message: message)
            }
            let lowered = endpoint.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), endpoint.count > 8,
                !endpoint.contains(where: { $0 == " " || $0.isNewline })
            else { throw fail("endpoint", "must be an http:// or https:// URL, got \"\(endpoint)\"") }
            if timeout <= .zero { throw fail("timeout", "must be positive") }
            if connectTimeout <= .zero { throw fail("connectTimeout", "must be positive") }
            if tmax <= .zero { throw fail("tmax", "must be positive") }
            if !(1...1024).contains(maximumConcurrentRequests) {
                throw fail("maximumConcurrentRequests", "must be 1...1024, got \(maximumConcurrentRequests)")
            }
            if !(1024...(64 << 20)).contains(maximumResponseBytes) {
                throw fail("maximumResponseBytes", "must be 1KiB...64MiB, got \(maximumResponseBytes)")
            }
            if currency.count != 3 || !currency.allSatisfy({ $0.isASCII && $0.isUppercase }) {
                throw fail("currency", "must be an ISO 4217 code such as USD, got \"\(currency)\"")
            }
            if !(bidFloor >= 0) { throw fail("bidFloor", "must not be negative") }
            if !(1...1_000_000).contains(noticeQueueLimit) {
                throw fail("noticeQueueLimit", "must be 1...1000000, got \(noticeQueueLimit)")
            }
            if noticeTimeout <= .zero { throw fail("noticeTimeout", "must be positive") }
            if !(1...1024).contains(noticeConcurrency) {
                throw fail("noticeConcurrency", "must be 1...1024, got \(noticeConcurrency)")
            }
        }
    }
}
