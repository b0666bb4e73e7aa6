import AdLoaderCore
import AdLoaderJSON
import Testing

@testable import AdLoaderOpenRTB

struct BidRequestBuilderTests {
    func build(
        _ configure: (inout OpenRTBSource.Configuration) -> Void = { _ in },
        request: AdRequest = AdRequest(adUnitID: "feed"), count: Int = 3
    )
        throws -> JSONValue
    {
        var configuration = OpenRTBSource.Configuration()
        configure(&configuration)
        return try JSONValue.parse(
            BidRequestBuilder(configuration: configuration).build(request, count: count, id: "auction-1"))
    }

    @Test(arguments: 1...5) func oneImpressionPerWantedAdWithTheNativeRequest(count: Int) throws {
        let json = try build(count: count)
        #expect(json["id"]?.string == "auction-1")
        let imps = try #require(json["imp"]?.array)
        #expect(imps.map { $0["id"]?.string } == (1...count).map { String($0) })
        for imp in imps {
            #expect(imp["tagid"]?.string == "feed")
            #expect(imp["native"]?["ver"]?.string == "1.2")
            let native = try JSONValue.parse(try #require(imp["native"]?["request"]?.string))
            #expect(native["ver"]?.string == "1.2")
            #expect(NativeAssetLayout(nativeRequest: native) == .standard)
        }
        #expect(json["tmax"]?.integer == 1000)
        #expect(json["cur"]?.array?.compactMap(\.string) == ["USD"])
        #expect(json["test"] == nil)
        #expect(json["site"] != nil && json["app"] == nil)
    }

    @Test func standardNativeRequestAsksForEveryFeedAsset() throws {
        let native = try JSONValue.parse(NativeAssetLayout.standardRequestJSON)
        let assets = try #require(native["assets"]?.array)
        #expect(assets.count == 8)
        #expect(assets.compactMap { $0["data"]?["type"]?.integer } == [2, 12, 1, 3, 6])
        #expect(assets.compactMap { $0["img"]?["type"]?.integer } == [1, 3])
        #expect(assets.filter { $0["required"]?.integer == 1 }.count == 2)
    }

    @Test func appDevicePrivacyStoredRequestsAndTargeting() throws {
        let request = AdRequest(
            adUnitID: "u", keywords: ["news", "sport"], contentURL: "https://example.com/a",
            targeting: ["section": "top"],
            consentClass: "eu-kids",
            consent: ConsentTerms(gdpr: true, consentString: "CONSENT", usPrivacy: "1YNN", coppa: true))
        let json = try build(
            {
                $0.appBundle = "com.example"
                $0.appName = "Example"
                $0.publisherID = "pub"
                $0.deviceOS = "android"
                $0.test = true
                $0.currency = "EUR"
                $0.bidFloor = 0.25
                $0.storedRequestID = "stored-req"
                $0.storedImpressionID = "stored-imp"
                $0.endpoint = "https://pbs.example/openrtb2/auction"
            }, request: request, count: 1)
        let app = try #require(json["app"])
        #expect(app["bundle"]?.string == "com.example" && app["name"]?.string == "Example")
        #expect(app["keywords"]?.string == "news,sport")
        #expect(app["publisher"]?["id"]?.string == "pub")
        #expect(app["content"]?["url"]?.string == "https://example.com/a")
        // A COPPA class limits tracking; no identifier whatever the class.
        #expect(json["device"]?["os"]?.string == "android" && json["device"]?["lmt"]?.integer == 1)
        #expect(json["device"]?["ip"] == nil && json["device"]?["ifa"] == nil)
        #expect(json["user"]?["id"] == nil && json["user"]?["consent"]?.string == "CONSENT")
        #expect(json["user"]?["ext"]?["consent"]?.string == "CONSENT")
        #expect(json["regs"]?["gdpr"]?.integer == 1 && json["regs"]?["coppa"]?.integer == 1)
        #expect(json["regs"]?["us_privacy"]?.string == "1YNN" && json["regs"]?["ext"]?["us_privacy"]?.string == "1YNN")
        #expect(json["test"]?.integer == 1)
        #expect(json["cur"]?.array?.first?.string == "EUR")
        #expect(json["ext"]?["prebid"]?["storedrequest"]?["id"]?.string == "stored-req")
        let imp = try #require(json["imp"]?.array?.first)
        #expect(imp["bidfloor"]?.number == 0.25 && imp["bidfloorcur"]?.string == "EUR")
        #expect(imp["secure"]?.integer == 1)
        #expect(imp["ext"]?["prebid"]?["storedrequest"]?["id"]?.string == "stored-imp")
        #expect(imp["ext"]?["data"]?["section"]?.string == "top")
    }

    @Test func nonPersonalizedLoaderSendsLimitedTrackingAndNoUserID() throws {
        let json = try build({ _ in }, request: AdRequest(adUnitID: "u", nonPersonalized: true))
        #expect(json["device"]?["lmt"]?.integer == 1)
        #expect(json["user"] == nil)
    }

    @Test(arguments: [
        ConsentTerms(),
        ConsentTerms(usPrivacy: "1YYN", limitAdTracking: true),
        ConsentTerms(gpp: "DBABLA~BVVqAAEABgA.QA", gppSectionIDs: [7, 8]),
        ConsentTerms(gdpr: true, consentString: "CQ"),
    ])
    func regsSayExactlyTheClassTerms(terms: ConsentTerms) throws {
        let json = try build({ _ in }, request: AdRequest(adUnitID: "u", consent: terms))
        let regs = try #require(json["regs"])
        #expect(regs["coppa"]?.integer == (terms.coppa ? 1 : 0))
        #expect(regs["gdpr"]?.integer == (terms.gdpr ? 1 : 0) && regs["ext"]?["gdpr"]?.integer == (terms.gdpr ? 1 : 0))
        #expect(regs["us_privacy"]?.string == (terms.usPrivacy.isEmpty ? nil : terms.usPrivacy))
        #expect(regs["gpp"]?.string == (terms.gpp.isEmpty ? nil : terms.gpp))
        #expect(
            regs["gpp_sid"]?.array?.compactMap(\.integer)
                == (terms.gpp.isEmpty ? nil : terms.gppSectionIDs.map(Int.init)))
        #expect(json["device"]?["lmt"]?.integer == (terms.limitAdTracking ? 1 : 0))
        #expect(json["user"]?["consent"]?.string == (terms.gdpr ? terms.consentString : nil))
    }

    @Test func sourceCarriesTheTransactionAndTheOperatorsSupplyChainNode() throws {
        var configuration = OpenRTBSource.Configuration()
        configuration.supplyChainASI = "news.example"
        configuration.supplyChainSID = "pub-42"
        let text = BidRequestBuilder(configuration: configuration).build(
            AdRequest(adUnitID: "u"), count: 1, id: "a-1", transactionID: "t-1")
        let json = try JSONValue.parse(text)
        #expect(json["source"]?["tid"]?.string == "t-1")
        let schain = json["source"]?["schain"]
        #expect(schain?["complete"]?.integer == 1 && schain?["ver"]?.string == "1.0")
        let node = schain?["nodes"]?.array?.first
        #expect(node?["asi"]?.string == "news.example" && node?["sid"]?.string == "pub-42" && node?["hp"]?.integer == 1)
        // Without a node, only the transaction id; the auction id is the tid when none is given.
        let plain = try JSONValue.parse(
            BidRequestBuilder(configuration: .init()).build(AdRequest(adUnitID: "u"), count: 1, id: "a-2"))
        #expect(plain["source"]?["tid"]?.string == "a-2" && plain["source"]?["schain"] == nil)
        configuration.supplyChainSID = ""
        #expect(throws: ConfigError.self) { try configuration.validate() }
    }

    @Test func impressionsCarryTheLoadersFloorAndTheAdsUsableLife() throws {
        var loader = LoaderConfiguration(name: "video")
        loader.lifetime = .seconds(1800)
        loader.bidFloor = 2.5
        loader.bidFloorCurrency = "EUR"
        var configuration = OpenRTBSource.Configuration()
        configuration.bidFloor = 0.1
        let json = try build({ $0.bidFloor = 0.1 }, request: loader.request(adUnitID: "u"), count: 2)
        for imp in json["imp"]?.array ?? [] {
            #expect(imp["bidfloor"]?.number == 2.5 && imp["bidfloorcur"]?.string == "EUR")
            #expect(imp["exp"]?.integer == 1800)
        }
        // No loader floor: the source's, in the source's currency.
        let sourceFloor = try build(
            { $0.bidFloor = 0.1 }, request: LoaderConfiguration().request(adUnitID: "u"), count: 1)
        #expect(sourceFloor["imp"]?.array?.first?["bidfloor"]?.number == 0.1)
        #expect(sourceFloor["imp"]?.array?.first?["bidfloorcur"]?.string == "USD")
        loader.bidFloorCurrency = "eur"
        #expect(throws: ConfigError.self) { try loader.validate() }
    }

    @Test func stringsAreEscaped() throws {
        let json = try build({ $0.appBundle = "a\"b\\c\n" }, request: AdRequest(adUnitID: "u\u{1}\"x"))
        #expect(json["app"]?["bundle"]?.string == "a\"b\\c\n")
        #expect(json["imp"]?.array?.first?["tagid"]?.string == "u\u{1}\"x")
    }

    @Test func validationNamesTheField() {
        var configuration = OpenRTBSource.Configuration()
        configuration.endpoint = "ftp://x"
        #expect(
            throws: ConfigError(
                field: "sources.openrtb.endpoint", message: "must be an http:// or https:// URL, got \"ftp://x\"")
        ) {
            try configuration.validate()
        }
        configuration = OpenRTBSource.Configuration()
        configuration.currency = "usd"
        #expect(throws: ConfigError.self) { try configuration.validate() }
    }
}
