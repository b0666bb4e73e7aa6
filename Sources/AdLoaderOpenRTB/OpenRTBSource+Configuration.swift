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
        /// `device.ua`, `device.os`, `device.language`; empty = not sent. No `device.ip` and no
        /// `user.id`: a pooled request never carries an identifier. `regs`, `user.consent` and
        /// `device.lmt` come from the pool's consent class (`loaders.NAME.consent`).
        public var deviceUserAgent = ""
        public var deviceOS = ""
        public var deviceLanguage = ""
        /// The operator's node in `source.schain` (`asi`: its advertising system domain, `sid`:
        /// its seller id there); both empty = no schain sent. Set both or neither.
        public var supplyChainASI = ""
        public var supplyChainSID = ""
        /// Prebid Server stored request id (`ext.prebid.storedrequest.id`); empty = none.
        public var storedRequestID = ""
        /// Prebid Server stored impression id (`imp.ext.prebid.storedrequest.id`); empty = none.
        public var storedImpressionID = ""
        /// What an interstitial loader's impressions ask for (`imp.instl: 1`): any of
        /// `banner`, `video`, `native`, in one multi-format impression; the bid's `mtype` says
        /// which it is. Empty: interstitial loaders on this source are refused at start.
        public var interstitialMedia = ["banner", "video"]
        /// What a rewarded loader's impressions ask for (`imp.instl: 1`, `imp.rwdd: 1`): `video`.
        /// Empty: rewarded loaders on this source are refused at start.
        public var rewardedMedia = ["video"]
        /// The reward a rewarded ad of this source grants, sent to the client with each one
        /// (`FullScreenCreative.reward`: type, e.g. "coins", and amount): an exchange's bid names
        /// no reward, the app's placement does. Empty type: no reward sent (the app applies its
        /// own). Set both or neither.
        public var rewardType = ""
        public var rewardAmount = 0
        /// What an app-open loader's impressions ask for (`imp.instl: 1`): `banner` (full-screen
        /// display) or `native`. Empty: app-open loaders on this source are refused at start.
        public var appOpenMedia = ["banner"]
        /// The sizes (`WxH`, pixels) a full-screen `banner` accepts (`banner.format`, portrait
        /// and landscape phones and tablets); the first is the `video` player size.
        public var fullScreenSizes = ["320x480", "480x320", "768x1024", "1024x768"]
        /// `video.mimes`: the containers the app's player plays.
        public var videoMimes = ["video/mp4"]
        /// `video.protocols`: VAST 2.0, 3.0, 4.0 and their wrappers (2, 3, 5, 6, 7, 8).
        public var videoProtocols = [2, 3, 5, 6, 7, 8]
        /// `video.maxduration` in seconds.
        public var videoMaximumDuration = 30
        /// Win, billing and loss notices waiting or in flight; more are dropped and counted.
        public var noticeQueueLimit = 1000
        /// Each notice's HTTP timeout.
        public var noticeTimeout: Duration = .seconds(2)
        /// Notices in flight at once.
        public var noticeConcurrency = 8
        /// A notice not answered 200 or 204 is tried again after this long (OpenRTB 2.6: every 10 s).
        public var noticeRetryInterval: Duration = .seconds(10)
        /// Tries of one notice in all, the first included (OpenRTB 2.6: for a minute, so 1 + 6).
        public var noticeAttempts = 7

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
            if supplyChainASI.isEmpty != supplyChainSID.isEmpty {
                throw fail(
                    supplyChainASI.isEmpty ? "supplyChainASI" : "supplyChainSID",
                    "supplyChainASI and supplyChainSID go together")
            }
            if rewardType.isEmpty != (rewardAmount == 0) {
                throw fail(
                    rewardType.isEmpty ? "rewardType" : "rewardAmount", "rewardType and rewardAmount go together")
            }
            if !(0...1_000_000_000).contains(rewardAmount) {
                throw fail("rewardAmount", "must be 1...1000000000, got \(rewardAmount)")
            }
            if rewardType.utf8.count > 64
                || rewardType.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                throw fail("rewardType", "must be at most 64 bytes without control characters")
            }
            for format in AdFormat.allCases {
                guard let key = Self.mediaKey(for: format) else { continue }
                let names =
                    format == .interstitial ? interstitialMedia : format == .rewarded ? rewardedMedia : appOpenMedia
                let allowed = Self.allowedMedia(for: format)
                for name in names where !allowed.contains(where: { $0.rawValue == name }) {
                    throw fail(
                        key,
                        "\"\(name)\" is not a \(format) medium (use \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")))"
                    )
                }
                if Set(names).count != names.count { throw fail(key, "names a medium twice") }
            }
            if fullScreenSizes.isEmpty { throw fail("fullScreenSizes", "needs at least one WxH size") }
            for size in fullScreenSizes where OpenRTBSize(size) == nil {
                throw fail("fullScreenSizes", "\"\(size)\" is not WxH with both sides 1...10000, e.g. 320x480")
            }
            if videoMimes.isEmpty || videoMimes.contains(where: { !$0.contains("/") || $0.contains(" ") }) {
                throw fail("videoMimes", "needs MIME types such as video/mp4")
            }
            if videoProtocols.isEmpty || videoProtocols.contains(where: { !(1...12).contains($0) }) {
                throw fail("videoProtocols", "needs OpenRTB protocol codes 1...12 (2, 3, 5, 6, 7, 8: VAST 2-4)")
            }
            if !(1...600).contains(videoMaximumDuration) {
                throw fail("videoMaximumDuration", "must be 1...600 seconds, got \(videoMaximumDuration)")
            }
            if !(1...1_000_000).contains(noticeQueueLimit) {
                throw fail("noticeQueueLimit", "must be 1...1000000, got \(noticeQueueLimit)")
            }
            if noticeTimeout <= .zero { throw fail("noticeTimeout", "must be positive") }
            if !(1...1024).contains(noticeConcurrency) {
                throw fail("noticeConcurrency", "must be 1...1024, got \(noticeConcurrency)")
            }
            if noticeRetryInterval < .milliseconds(10) { throw fail("noticeRetryInterval", "must be at least 10ms") }
            if !(1...100).contains(noticeAttempts) {
                throw fail("noticeAttempts", "must be 1...100, got \(noticeAttempts)")
            }
        }
    }
}
