package import AdLoaderConfiguration
package import AdLoaderCore

// The OpenRTB source's settings, declared by the source's own module: `sources.NAME` with
// `"type": "openrtb"`; the daemon's registry composes it and builds the source.
extension OpenRTBSource.Configuration: SourceSettings {
    package static var typeName: String { "openrtb" }

    package static var summary: String {
        "loads native, interstitial, rewarded and app-open ads from an OpenRTB 2.6 exchange (e.g. Prebid Server's /openrtb2/auction: Native 1.2, banner and VAST video impressions) and fires its win, billing and loss notices"
    }

    // `formats` (OpenRTBMedia.swift): native, and each full-screen format whose media list
    // (`interstitialMedia`, `rewardedMedia`, `appOpenMedia`) is not empty: with an empty list the
    // source cannot request the format, and a loader of it is refused naming the key.

    package static func formatKey(for format: AdFormat) -> String? { mediaKey(for: format) }

    package static let keys = ConfigTable<OpenRTBSource.Configuration>(
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
                "interstitialMedia", \.interstitialMedia, .strings,
                "what an interstitial impression (instl 1) asks for: banner, video, native (one multi-format imp; bid.mtype says which); [] = no interstitial loaders"
            ),
            .value(
                "rewardedMedia", \.rewardedMedia, .strings,
                "what a rewarded impression (instl 1, rwdd 1) asks for: video; [] = no rewarded loaders"),
            .value(
                "rewardType", \.rewardType, .optionalString,
                "the reward a rewarded ad grants, sent with it to the client (FullScreenCreative.reward.type, e.g. coins; with rewardAmount); none = no reward sent"
            ),
            .value("rewardAmount", \.rewardAmount, .int(in: 0...1_000_000_000), "FullScreenCreative.reward.amount"),
            .value(
                "appOpenMedia", \.appOpenMedia, .strings,
                "what an app-open impression (instl 1) asks for: banner (full-screen display) or native; [] = no app-open loaders"
            ),
            .value(
                "fullScreenSizes", \.fullScreenSizes, .strings,
                "WxH sizes a full-screen banner accepts (banner.format); the first is the video player's w and h"),
            .value("videoMimes", \.videoMimes, .strings, "video.mimes: containers the app's player plays"),
            .value(
                "videoProtocols", \.videoProtocols, .ints(in: 1...12),
                "video.protocols: OpenRTB codes (2, 3, 5, 6, 7, 8 = VAST 2.0-4.0 and wrappers)"),
            .value(
                "videoMaximumDuration", \.videoMaximumDuration, .int(in: 1...600), "video.maxduration in seconds"),
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

    package func validate(field: String) throws(ConfigError) {
        do {
            try validate()
        } catch {
            throw error.renamed(from: Self.fieldPrefix, to: field)
        }
    }
}
