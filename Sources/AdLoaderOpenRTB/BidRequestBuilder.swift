public import AdLoaderCore
import AdLoaderLogging

/// Writes the OpenRTB 2.6 BidRequest for one batch: pure, so tests and the fuzzer see exactly
/// what goes on the wire.
///
/// One `imp` per wanted ad, ids `"1"`...`"count"`, each with `native.request` (Native 1.2,
/// ``NativeAssetLayout/standardRequestJSON``); `app` when an app bundle is configured, else
/// `site`; `device`, `user` and `regs` from the configuration and the loader's request
/// (a non-personalized loader sends `device.lmt: 1` and no user id); the loader's keywords and
/// content URL; its targeting as `imp.ext.data`; Prebid Server stored-request ids when set.
public struct BidRequestBuilder: Sendable {
    public let configuration: OpenRTBSource.Configuration

    public init(configuration: OpenRTBSource.Configuration) { self.configuration = configuration }

    /// The imp ids of a batch of `count` ads.
    public static func impressionIDs(count: Int) -> [String] { (0..<max(count, 0)).map { String($0 + 1) } }

    /// The BidRequest JSON for `count` ads (1...5) of `request`, with auction id `id`.
    public func build(_ request: AdRequest, count: Int, id: String) -> String {
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
            json.key("native")
            json.beginObject()
            json.field("request", NativeAssetLayout.standardRequestJSON)
            json.field("ver", "1.2")
            json.endObject()
            if c.bidFloor > 0 {
                json.key("bidfloor")
                json.value(c.bidFloor)
                json.field("bidfloorcur", c.currency)
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
        writeInventory(request, into: &json)
        writeDevice(request, into: &json)
        writeUser(request, into: &json)
        writeRegs(into: &json)
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
        if !c.deviceIP.isEmpty { json.field("ip", c.deviceIP) }
        if !c.deviceOS.isEmpty { json.field("os", c.deviceOS) }
        if !c.deviceLanguage.isEmpty { json.field("language", c.deviceLanguage) }
        json.field("lmt", request.nonPersonalized ? 1 : 0)
        json.endObject()
    }

    private func writeUser(_ request: AdRequest, into json: inout JSONWriter) {
        let c = configuration
        let id = request.nonPersonalized ? "" : c.userID
        guard !id.isEmpty || (c.gdpr && !c.gdprConsent.isEmpty) else { return }
        json.key("user")
        json.beginObject()
        if !id.isEmpty { json.field("id", id) }
        if c.gdpr && !c.gdprConsent.isEmpty {
            json.field("consent", c.gdprConsent)
            json.key("ext")
            json.beginObject()
            json.field("consent", c.gdprConsent)
            json.endObject()
        }
        json.endObject()
    }

    private func writeRegs(into json: inout JSONWriter) {
        let c = configuration
        json.key("regs")
        json.beginObject()
        json.field("coppa", c.coppa ? 1 : 0)
        json.field("gdpr", c.gdpr ? 1 : 0)
        if !c.usPrivacy.isEmpty { json.field("us_privacy", c.usPrivacy) }
        if !c.gpp.isEmpty {
            json.field("gpp", c.gpp)
            json.key("gpp_sid")
            json.beginArray()
            for sid in c.gppSectionIDs { if let number = Int(sid) { json.value(number) } }
            json.endArray()
        }
        // 2.5 exchanges (and Prebid Server's older adapters) read these from ext.
        json.key("ext")
        json.beginObject()
        json.field("gdpr", c.gdpr ? 1 : 0)
        if !c.usPrivacy.isEmpty { json.field("us_privacy", c.usPrivacy) }
        json.endObject()
        json.endObject()
    }
}
