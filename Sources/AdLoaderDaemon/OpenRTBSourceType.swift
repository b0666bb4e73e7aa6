import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderHTTP
import AdLoaderOpenRTB

/// `"type": "openrtb"`: ``OpenRTBSource``, native ads from an OpenRTB 2.6 exchange such as
/// Prebid Server, over libcurl on the daemon's loop, with win/billing and loss notices.
struct OpenRTBSourceType: DemandSourceType {
    var name: String { "openrtb" }

    var summary: String {
        "loads native ads from an OpenRTB 2.6 / Native 1.2 exchange (e.g. Prebid Server's /openrtb2/auction) and fires its win, billing and loss notices"
    }

    var keys: ConfigTable<OpenRTBSource.Configuration> { Self.keys }

    /// Bid requests carry a `native` impression only (``BidRequestBuilder``), and bids are read
    /// as Native 1.2 markup: a full-screen loader on this source could never be served.
    var formats: [AdFormat] { [.native] }

    private static let keys = ConfigTable<OpenRTBSource.Configuration>(
        section: "sources.openrtb", defaults: OpenRTBSource.Configuration(),
        keys: [
            .value("endpoint", \.endpoint, .string, flag: "--openrtb-endpoint", "URL BidRequests are POSTed to"),
            .value("timeout", \.timeout, .duration, flag: "--openrtb-timeout", "whole HTTP exchange, then retryable"),
            .value("connectTimeout", \.connectTimeout, .duration, "TCP and TLS connect"),
            .value("tmax", \.tmax, .duration, "tmax sent: time the exchange's auction may take"),
            .value(
                "maximumConcurrentRequests", \.maximumConcurrentRequests, .int(in: 1...1024),
                "BidRequests in flight at once, all pools of the source; more wait (a warning names this key, once a minute)"
            ),
            .value("maximumResponseBytes", \.maximumResponseBytes, .size, "largest response body accepted"),
            .value("currency", \.currency, .string, "cur: currency bids are wanted in"),
            .value("test", \.test, .bool, "send test: 1 (the exchange must not bill)"),
            .value("bidFloor", \.bidFloor, .double, "imp.bidfloor in currency; 0 = none"),
            .value("appBundle", \.appBundle, .optionalString, "app.bundle; set = the request has app, else site"),
            .value("appName", \.appName, .optionalString, "app.name"),
            .value("appStoreURL", \.appStoreURL, .optionalString, "app.storeurl"),
            .value(
                "sitePage", \.sitePage, .optionalString,
                "site.page when there is no app bundle (a loader's contentURL wins)"),
            .value("siteDomain", \.siteDomain, .optionalString, "site.domain"),
            .value("publisherID", \.publisherID, .optionalString, "app.publisher.id or site.publisher.id"),
            .value("deviceUserAgent", \.deviceUserAgent, .optionalString, "device.ua"),
            .value("deviceOS", \.deviceOS, .optionalString, "device.os"),
            .value("deviceLanguage", \.deviceLanguage, .optionalString, "device.language"),
            .value(
                "supplyChainASI", \.supplyChainASI, .optionalString,
                "source.schain node asi: the operator's advertising system domain (with supplyChainSID; none = no schain)"
            ),
            .value(
                "supplyChainSID", \.supplyChainSID, .optionalString,
                "source.schain node sid: the operator's seller id in that system"),
            .value(
                "storedRequestID", \.storedRequestID, .optionalString,
                "Prebid Server stored request id (ext.prebid.storedrequest.id)"),
            .value(
                "storedImpressionID", \.storedImpressionID, .optionalString,
                "Prebid Server stored impression id (imp.ext.prebid.storedrequest.id)"),
            .value(
                "noticeQueueLimit", \.noticeQueueLimit, .int(in: 1...1_000_000),
                "notices waiting or in flight; more are dropped and counted"),
            .value("noticeTimeout", \.noticeTimeout, .duration, "each notice's HTTP timeout"),
            .value(
                "noticeRetryInterval", \.noticeRetryInterval, .duration,
                "a notice not answered 200 or 204 (another status, a transport failure, a timeout) is tried again after this long (OpenRTB 2.6: 10 s)"
            ),
            .value(
                "noticeAttempts", \.noticeAttempts, .int(in: 1...100),
                "tries of one notice in all, then it is given up and counted (noticesFailed); 7 = every 10 s for a minute"
            ),
            .value("noticeConcurrency", \.noticeConcurrency, .int(in: 1...1024), "notices in flight at once"),
        ],
        moved: Dictionary(
            uniqueKeysWithValues: ["coppa", "gdpr", "gdprConsent", "usPrivacy", "gpp", "gppSectionIDs"].map {
                ($0, "regulation fields come from the pool's consent class (loaders.NAME.consent.classes)")
            }
                + ["userID", "deviceIP"].map {
                    (
                        $0,
                        "a pooled BidRequest never carries a device or user identifier (the ad is bought before its user is known)"
                    )
                }))

    func validate(_ settings: OpenRTBSource.Configuration, field: String) throws(ConfigError) {
        do {
            try settings.validate()
        } catch {
            let prefix = OpenRTBSource.Configuration.fieldPrefix
            guard error.field.hasPrefix(prefix) else { throw error }
            throw ConfigError(field: field + error.field.dropFirst(prefix.count), message: error.message)
        }
    }

    func makeSource(_ settings: OpenRTBSource.Configuration, context: DemandSourceContext) throws -> any DemandSource {
        guard let loop = context.loop else {
            throw ConfigError(field: "sources.openrtb", message: "an openrtb source needs the daemon's event loop")
        }
        try validate(settings, field: "sources.openrtb")
        var http = CurlHTTPClient.Configuration()
        http.maximumConcurrentRequests = settings.maximumConcurrentRequests
        http.maximumResponseBytes = settings.maximumResponseBytes
        http.maximumIdleConnections = max(4, settings.maximumConcurrentRequests)
        let client = try CurlHTTPClient(loop: loop, configuration: http)
        // The source's in-flight cap binding is visible: a warning at most once a minute.
        var lastWarning: Int64?
        let logger = context.logger
        let clock = context.clock
        let endpoint = settings.endpoint
        let cap = settings.maximumConcurrentRequests
        let setting = "sources.\(context.sourceName.isEmpty ? "NAME" : context.sourceName).maximumConcurrentRequests"
        client.onWait = { [weak client] in
            let now = clock.now.unixMilliseconds
            if let last = lastWarning, now - last < 60_000 { return }
            lastWarning = now
            logger.warning(
                "BidRequests wait: the source's in-flight cap binds",
                [
                    "endpoint": .string(endpoint), "cap": .int(Int64(cap)),
                    "waited": .int(Int64(client?.waitedCount ?? 0)),
                    "setting": .string(setting),
                ])
        }
        var noticeHTTP = CurlHTTPClient.Configuration()
        noticeHTTP.maximumConcurrentRequests = settings.noticeConcurrency
        noticeHTTP.maximumQueuedRequests = settings.noticeQueueLimit
        noticeHTTP.maximumResponseBytes = 64 << 10
        let noticeClient: CurlHTTPClient
        do {
            noticeClient = try CurlHTTPClient(loop: loop, configuration: noticeHTTP)
        } catch {
            client.close()
            throw error
        }
        let source: OpenRTBSource
        do {
            source = try OpenRTBSource(
                configuration: settings, client: client, noticeClient: noticeClient, clock: context.clock,
                scheduler: context.scheduler, noticeStore: context.noticeStore,
                name: context.sourceName.isEmpty ? "openrtb" : context.sourceName, logger: context.logger)
        } catch {
            client.close()
            noticeClient.close()
            throw error
        }
        // Notices the previous run left undelivered go out first (once: the store forgets each
        // when it is delivered or given up).
        let restored = source.restoreNotices()
        if restored > 0 {
            context.logger.info(
                "notices restored from the pool store",
                ["source": .string(context.sourceName), "notices": .int(Int64(restored))])
        }
        // Under way when the previous run ended: the exchange may have counted them, so they
        // are not sent again (a notice is never delivered twice).
        let uncertain = source.stats.noticesUncertain
        if uncertain > 0 {
            context.logger.warning(
                "notices uncertain after the previous run (in flight when it ended), not sent again",
                ["source": .string(context.sourceName), "notices": .int(Int64(uncertain))])
        }
        context.onStop {
            source.close()
            client.close()
            noticeClient.close()
        }
        return source
    }
}
