public import AdLoaderCore
import AdLoaderLogging

/// Writes the OpenRTB 2.6 BidRequest for one batch: pure, so tests and the fuzzer see exactly
/// what goes on the wire.
///
/// One `imp` per wanted ad, ids `"1"`...`"count"`, each with the media of the loader's format:
/// `native.request` (Native 1.2, ``NativeAssetLayout/standardRequestJSON``) for native; for a
/// full-screen format `instl: 1` (and `rwdd: 1` when rewarded) with its configured `banner`,
/// `video` and/or `native` objects (``OpenRTBSource/Configuration/media(for:)``); `app` when an app bundle is configured, else
/// `site`; `device` from the configuration, `regs`, `user.consent` and `device.lmt` from the
/// consent class of the pool (``AdRequest/consent``: the class's configured terms, never a
/// borrower's own signals; a non-personalized loader also sends `device.lmt: 1`); the loader's
/// keywords and content URL; its targeting as `imp.ext.data`; Prebid Server stored-request ids
/// when set. A pooled request is bought before its user is known, so it never carries a device
/// or user identifier (no `user.id`, `buyeruid`, `device.ifa`, `dpid*` or `ip`) and no geolocation.
public struct BidRequestBuilder: Sendable {
    public let configuration: OpenRTBSource.Configuration

    public init(configuration: OpenRTBSource.Configuration) { self.configuration = configuration }

    /// The imp ids of a batch of `count` ads.
    public static func impressionIDs(count: Int) -> [String] { (0..<max(count, 0)).map { String($0 + 1) } }

    /// The floor of `request`'s impressions (`imp.bidfloor` and `imp.bidfloorcur`): the loader's,
    /// else the source's; nil when it is 0 (none sent, and no bid is dropped for its price).
    public func floor(of request: AdRequest) -> BidResponseParser.Floor? {
        let price = request.bidFloor ?? configuration.bidFloor
        guard price > 0 else { return nil }
        return BidResponseParser.Floor(price: price, currency: request.bidFloorCurrency ?? configuration.currency)
    }

    /// The BidRequest JSON for `count` ads (1...5) of `request`, with auction id `id` and
    /// `source.tid` `transactionID` (`id` when nil).
    public func build(_ request: AdRequest, count: Int, id: String, transactionID: String? = nil) -> String {
        let c = configuration
        var json = JSONWriter(capacity: 1024 + 700 * count)
        json.beginObject()
        json.field("id", id)
        json.key("imp")
        json.beginArray()
        for impID in Self.impressionIDs(count: count) {
            json.beginObject()
            json.field("id", impID)
            json.field("tagid", request.adUnitID)
            writeMedia(request.format, into: &json)
            if let floor = floor(of: request) {
                json.key("bidfloor")
                json.value(floor.price)
                json.field("bidfloorcur", floor.currency)
            }
            // The ad may wait in the pool this long before its impression.
            // (whole seconds, at least 1: a strict exchange refuses exp 0 for a life under a second).
            if let life = request.usableLife, life > .zero {
                json.field("exp", Int(max(1, (life.milliseconds + 999) / 1000)))
            }
            if c.endpoint.lowercased().hasPrefix("https://") { json.field("secure", 1) }
            if !request.targeting.isEmpty || !c.storedImpressionID.isEmpty {
                json.key("ext")
                json.beginObject()
                if !request.targeting.isEmpty {
                    json.key("data")
                    json.beginObject()
                    for (key, value) in request.targeting.sorted(by: { $0.key < $1.key }) { json.field(key, value) }
                    json.endObject()
                }
                if !c.storedImpressionID.isEmpty { writeStoredRequest(c.storedImpressionID, into: &json) }
                json.endObject()
            }
            json.endObject()
        }
        json.endArray()
        writeSource(transactionID ?? id, into: &json)
        writeInventory(request, into: &json)
        writeDevice(request, into: &json)
        writeUser(request, into: &json)
        writeRegs(request.consent, into: &json)
        json.field("tmax", Int(c.tmax.milliseconds))
        json.key("cur")
        json.beginArray()
        json.value(c.currency)
        json.endArray()
        json.field("at", 1)
        if c.test { json.field("test", 1) }
        if !c.storedRequestID.isEmpty {
            json.key("ext")
            json.beginObject()
            writeStoredRequest(c.storedRequestID, into: &json)
            json.endObject()
        }
        json.endObject()
        return json.text
    }

    /// The impression's media objects for `format` (``OpenRTBSource/Configuration/media(for:)``)
    /// and its full-screen flags: `instl: 1` for every full-screen format, `rwdd: 1` for rewarded.
    private func writeMedia(_ format: AdFormat, into json: inout JSONWriter) {
        let c = configuration
        if format.isFullScreen { json.field("instl", 1) }
        if format == .rewarded { json.field("rwdd", 1) }
        let sizes = c.sizes
        for medium in c.media(for: format) {
            switch medium {
            case .native:
                json.key("native")
                json.beginObject()
                json.field("request", NativeAssetLayout.standardRequestJSON)
                json.field("ver", "1.2")
                json.endObject()
            case .banner:
                json.key("banner")
                json.beginObject()
                json.key("format")
                json.beginArray()
                for size in sizes {
                    json.beginObject()
                    json.field("w", size.width)
                    json.field("h", size.height)
                    json.endObject()
                }
                json.endArray()
                json.field("pos", 7)  // full screen
                json.endObject()
            case .video:
                json.key("video")
                json.beginObject()
                json.key("mimes")
                json.beginArray()
                for mime in c.videoMimes { json.value(mime) }
                json.endArray()
                json.key("protocols")
                json.beginArray()
                for code in c.videoProtocols { json.value(code) }
                json.endArray()
                if let player = sizes.first {
                    json.field("w", player.width)
                    json.field("h", player.height)
                }
                json.field("maxduration", c.videoMaximumDuration)
                json.field("linearity", 1)
                json.field("plcmt", 3)  // 2.6: interstitial
                json.field("placement", 5)  // 2.5: interstitial/slider/floating
                json.field("pos", 7)
                if format == .rewarded { json.field("skip", 0) }
                json.endObject()
            }
        }
    }

    /// `source.tid` and, when configured, `source.schain` with the operator's node (complete:
    /// the publisher sells its own inventory through this node).
    private func writeSource(_ transactionID: String, into json: inout JSONWriter) {
        let c = configuration
        json.key("source")
        json.beginObject()
        json.field("tid", transactionID)
        if !c.supplyChainASI.isEmpty {
            json.key("schain")
            json.beginObject()
            json.field("complete", 1)
            json.field("ver", "1.0")
            json.key("nodes")
            json.beginArray()
            json.beginObject()
            json.field("asi", c.supplyChainASI)
            json.field("sid", c.supplyChainSID)
            json.field("hp", 1)
            json.endObject()
            json.endArray()
            json.endObject()
        }
        json.endObject()
    }

    private func writeStoredRequest(_ id: String, into json: inout JSONWriter) {
        json.key("prebid")
        json.beginObject()
        json.key("storedrequest")
        json.beginObject()
        json.field("id", id)
        json.endObject()
        json.endObject()
    }

    private func writeInventory(_ request: AdRequest, into json: inout JSONWriter) {
        let c = configuration
        let isApp = !c.appBundle.isEmpty
        json.key(isApp ? "app" : "site")
        json.beginObject()
        if isApp {
            json.field("bundle", c.appBundle)
            if !c.appName.isEmpty { json.field("name", c.appName) }
            if !c.appStoreURL.isEmpty { json.field("storeurl", c.appStoreURL) }
        } else {
            if let page = request.contentURL ?? (c.sitePage.isEmpty ? nil : c.sitePage) { json.field("page", page) }
            if !c.siteDomain.isEmpty { json.field("domain", c.siteDomain) }
        }
        if !request.keywords.isEmpty { json.field("keywords", request.keywords.joined(separator: ",")) }
        if !c.publisherID.isEmpty {
            json.key("publisher")
            json.beginObject()
            json.field("id", c.publisherID)
            json.endObject()
        }
        if isApp, let url = request.contentURL {
            json.key("content")
            json.beginObject()
            json.field("url", url)
            json.endObject()
        }
        json.endObject()
    }

    private func writeDevice(_ request: AdRequest, into json: inout JSONWriter) {
        let c = configuration
        json.key("device")
        json.beginObject()
        if !c.deviceUserAgent.isEmpty { json.field("ua", c.deviceUserAgent) }
        if !c.deviceOS.isEmpty { json.field("os", c.deviceOS) }
        if !c.deviceLanguage.isEmpty { json.field("language", c.deviceLanguage) }
        json.field("lmt", request.nonPersonalized || request.consent.limitAdTracking || request.consent.coppa ? 1 : 0)
        json.endObject()
    }

    /// `user.consent` (and `user.ext.consent`) for a GDPR class, else no `user` at all.
    private func writeUser(_ request: AdRequest, into json: inout JSONWriter) {
        let terms = request.consent
        guard terms.gdpr && !terms.consentString.isEmpty else { return }
        json.key("user")
        json.beginObject()
        json.field("consent", terms.consentString)
        json.key("ext")
        json.beginObject()
        json.field("consent", terms.consentString)
        json.endObject()
        json.endObject()
    }

    private func writeRegs(_ terms: ConsentTerms, into json: inout JSONWriter) {
        json.key("regs")
        json.beginObject()
        json.field("coppa", terms.coppa ? 1 : 0)
        json.field("gdpr", terms.gdpr ? 1 : 0)
        if !terms.usPrivacy.isEmpty { json.field("us_privacy", terms.usPrivacy) }
        if !terms.gpp.isEmpty {
            json.field("gpp", terms.gpp)
            json.key("gpp_sid")
            json.beginArray()
            for sid in terms.gppSectionIDs { json.value(Int(sid)) }
            json.endArray()
        }
        // 2.5 exchanges (and Prebid Server's older adapters) read these from ext.
        json.key("ext")
        json.beginObject()
        json.field("gdpr", terms.gdpr ? 1 : 0)
        if !terms.usPrivacy.isEmpty { json.field("us_privacy", terms.usPrivacy) }
        json.endObject()
        json.endObject()
    }
}
