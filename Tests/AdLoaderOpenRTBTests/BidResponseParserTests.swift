import AdLoaderCore
import AdLoaderJSON
import Testing

@testable import AdLoaderOpenRTB

/// The real payloads of prebid-server's adapter tests (fixtures/SOURCES.md), each read with
/// the layout of the request it answered.
struct BidResponseParserTests {
    /// The mocked exchange body of a fixture and the native layout its request asked for.
    func load(_ name: String) throws -> (body: [UInt8], layout: NativeAssetLayout) {
        let document = try fixture(name)
        let calls = try #require(document["httpCalls"]?.array ?? document["httpcalls"]?.array)
        let response = try #require(calls.first?["mockResponse"])
        let request = try #require(document["mockBidRequest"]?["imp"]?.array?.first?["native"]?["request"])
        let body = response["body"].map(encode) ?? ""
        return (Array(body.utf8), NativeAssetLayout(nativeRequest: request))
    }

    @Test func smartadserverLegacyWrappedMarkupMapsEveryAsset() throws {
        let (body, layout) = try load("smartadserver/native-app.json")
        let outcome = try BidResponseParser.parse(body, layout: layout)
        let bid = try #require(outcome.bids.first)
        #expect(outcome.bids.count == 1 && outcome.dropped.isEmpty)
        #expect(bid.price == 0.86403)
        #expect(bid.seat == "13936")
        #expect(bid.impressionID == "1")
        let ad = bid.content
        #expect(ad.headline == "Hotel Katla")
        #expect(ad.body == "Vik")
        #expect(ad.callToAction == "Book Now")
        #expect(ad.price == "from $212")
        #expect(ad.image?.width == 800 && ad.image?.height == 800)
        #expect(ad.icon?.width == 200)
        #expect(ad.clickURL.hasPrefix("https://cat.va.us.criteo.com/delivery/ckn.php"))
        #expect(ad.adChoicesURL?.hasPrefix("https://privacy.us.criteo.com/adchoices") == true)
        #expect(ad.impressionTrackers.count == 1 && ad.impressionTrackers[0].contains("lgn.php"))
        #expect(bid.expirySeconds == nil, "exp 0 is no expiry")
    }

    @Test func improvedigitalUnwrappedMarkupWithUnnumberedRequestAssets() throws {
        let (body, layout) = try load("improvedigital/native.json")
        #expect(layout.assets.map(\.id) == Array(0..<7), "ids assigned 0..n-1 as Prebid Server does")
        let outcome = try BidResponseParser.parse(body, layout: layout)
        let ad = try #require(outcome.bids.first?.content)
        #expect(ad.headline == "Luxury Mars Cruises")
        #expect(ad.body == "Visit the planet in a luxury spaceship.")
        #expect(ad.callToAction == "Book today")
        #expect(ad.starRating == 3.8)
        #expect(ad.price == "FREE")
        #expect(ad.image?.url == "http://hb.improvedigital.com/creatives/display/300x250.jpg")
        #expect(outcome.currency == "USD")
    }

    @Test func rtbhouseDeprecatedNativePropIsNormalised() throws {
        let (body, layout) = try load("rtbhouse/native-with-deprecated-native-prop.json")
        let outcome = try BidResponseParser.parse(body, layout: layout)
        let bid = try #require(outcome.bids.first)
        #expect(outcome.bidResponseID == "test-bidid")
        #expect(bid.creativeID == "test-crid" && bid.adID == "test-adid")
        #expect(bid.advertiserDomains == ["adomain.com"])
        #expect(bid.content.headline == "title text")
        #expect(bid.content.body == "data value")
        #expect(bid.content.image == AdImage(url: "image.url", width: 1200, height: 628))
        #expect(bid.content.clickURL == "link.url")
        #expect(bid.content.impressionTrackers == ["imp.tracker.url", "event.tracker.url"])
    }

    @Test func smaatoBidMissingRequiredAssetsIsDroppedAndCounted() throws {
        let (body, layout) = try load("smaato/native.json")
        let outcome = try BidResponseParser.parse(body, layout: layout)
        #expect(outcome.bids.isEmpty)
        #expect(outcome.dropped.count == 1)
        #expect(outcome.dropped.first?.reason.contains("required asset") == true)
        #expect(outcome.isNoFill)
    }

    @Test func readpeak204IsANoFill() throws {
        let document = try fixture("readpeak/bid_response_204.json")
        let status = try #require(document["httpCalls"]?.array?.first?["mockResponse"]?["status"]?.integer)
        #expect(status == 204)
        let result = OpenRTBSource.classify(.success(.init(status: status)), impressionIDs: nil)
        #expect(try result.get().isNoFill)
    }

    @Test(arguments: [
        "", "  \n", "{}", #"{"id":"a","seatbid":[]}"#, #"{"id":"a","nbr":2}"#, #"{"id":"a","seatbid":null}"#,
        #"{"id":"a","seatbid":[{"bid":[]}]}"#,
    ])
    func noFillForms(_ body: String) throws {
        let outcome = try BidResponseParser.parse(Array(body.utf8), layout: .standard)
        #expect(outcome.bids.isEmpty && outcome.dropped.isEmpty)
    }

    @Test func nbrIsRecorded() throws {
        let outcome = try BidResponseParser.parse(Array(#"{"id":"a","nbr":8}"#.utf8), layout: .standard)
        #expect(outcome.noBidReason == 8)
    }

    @Test(arguments: [#"{"id": "#, "[]", "null", #""text""#, "{\"seatbid\": 5}", "\u{0}\u{1}garbage", "<html></html>"])
    func malformedBodiesThrow(_ body: String) {
        #expect(throws: BidResponseParser.ParseError.self) {
            try BidResponseParser.parse(Array(body.utf8), layout: .standard)
        }
    }

    /// A bid in our own layout, as the source gets it.
    static func bid(impression: String, price: Double = 1.5, adm: String = standardMarkup, extra: String = "") -> String
    {
        #"{"id":"b\#(impression)","impid":"\#(impression)","price":\#(price),"adm":\#(JSONWriterQuoted(adm))\#(extra)}"#
    }

    static let standardMarkup =
        #"{"native":{"ver":"1.2","assets":[{"id":1,"title":{"text":"Headline"}},{"id":3,"img":{"url":"https://i/m.jpg","w":1200,"h":627}},"#
        + #"{"id":6,"data":{"value":"Brand"}}],"link":{"url":"https://click","clicktrackers":["https://ct?p=${AUCTION_PRICE}"]},"#
        + #""imptrackers":["https://it?p=${AUCTION_PRICE}"]}}"#

    @Test func markupAsObjectAndPartialFillAndOnePerImpression() throws {
        let object = Self.standardMarkup
        let body =
            #"{"id":"r","seatbid":[{"seat":"s","bid":["#
            + Self.bid(impression: "1", price: 1) + "," + Self.bid(impression: "1", price: 2) + ","
            + #"{"id":"obj","impid":"2","price":0.5,"adm":\#(object)}"# + "]}]}"
        let outcome = try BidResponseParser.parse(Array(body.utf8), layout: .standard, impressionIDs: ["1", "2", "3"])
        #expect(outcome.bids.map(\.impressionID) == ["1", "2"])
        #expect(outcome.bids[0].price == 2, "the higher bid for one impression wins")
        #expect(outcome.dropped.map(\.reason) == ["outbid for the same impression"])
        #expect(outcome.bids[1].content.advertiser == "Brand")
    }

    @Test func bidsWithoutTitleImageLinkOrForUnknownImpressionsAreDropped() throws {
        let noImage = #"{"assets":[{"id":1,"title":{"text":"H"}}],"link":{"url":"u"}}"#
        let noLink = #"{"assets":[{"id":1,"title":{"text":"H"}},{"id":3,"img":{"url":"i"}}]}"#
        let notJSON = "<div>display</div>"
        let body =
            #"{"seatbid":[{"bid":["#
            + [
                Self.bid(impression: "1", adm: noImage), Self.bid(impression: "2", adm: noLink),
                Self.bid(impression: "3", adm: notJSON), Self.bid(impression: "9"),
                #"{"id":"np","impid":"4","adm":"{}"}"#,
            ].joined(separator: ",") + "]}]}"
        let outcome = try BidResponseParser.parse(
            Array(body.utf8), layout: .standard, impressionIDs: ["1", "2", "3", "4"])
        #expect(outcome.bids.isEmpty)
        #expect(outcome.dropped.count == 5)
        #expect(outcome.dropped[0].reason.contains("required asset 3"))
        #expect(outcome.dropped[1].reason == "no link.url")
        #expect(outcome.dropped[2].reason.hasPrefix("adm is not JSON"))
        #expect(outcome.dropped[3].reason.contains("unknown impression"))
        #expect(outcome.dropped[4].reason.contains("price"))
    }

    /// Each way a bid is dropped while its response is read has its OpenRTB loss reason code,
    /// and the dropped bid keeps what its loss notice's macros need.
    @Test func droppedBidsCarryTheirLossReasonCodes() throws {
        let lurl = #","lurl":"http://n/loss?r=${AUCTION_LOSS}""#
        let noImage = #"{"assets":[{"id":1,"title":{"text":"H"}}],"link":{"url":"u"}}"#
        let body =
            #"{"id":"r","seatbid":[{"seat":"s1","bid":["#
            + [
                Self.bid(impression: "1", price: 2, extra: #","adid":"ad1""# + lurl),
                Self.bid(impression: "1", price: 1, extra: lurl),
                Self.bid(impression: "2", adm: noImage, extra: lurl),
                Self.bid(impression: "9", extra: lurl),
                #"{"id":"np","impid":"3","adm":"{}""# + lurl + "}",
                #"{"id":"na","impid":"4","price":1"# + lurl + "}",
                Self.bid(impression: "5", extra: #","mtype":2"# + lurl),
                Self.bid(impression: "6", extra: #","mtype":7"# + lurl),
                #"{"id":"nv","impid":"7","price":1,"adm":5"# + lurl + "}",
            ].joined(separator: ",") + "]}]}"
        let outcome = try BidResponseParser.parse(
            Array(body.utf8), layout: .standard, impressionIDs: ["1", "2", "3", "4", "5", "6", "7"])
        #expect(outcome.bids.map(\.bidID) == ["b1"])
        let codes = Dictionary(uniqueKeysWithValues: outcome.dropped.map { ($0.impressionID, $0.lossReason) })
        #expect(codes["2"] == LossReason.invalidBidResponse, "native markup without its main image")
        #expect(codes["9"] == LossReason.invalidBidResponse, "an impression not asked for")
        #expect(codes["3"] == LossReason.missingBidPrice)
        #expect(codes["4"] == LossReason.missingMarkup)
        #expect(codes["5"] == LossReason.incorrectCreativeFormat, "video in a native batch")
        #expect(codes["6"] == LossReason.incorrectCreativeFormat, "an mtype that is no medium")
        #expect(codes["7"] == LossReason.invalidBidResponse, "adm neither markup nor an object")
        let outbid = try #require(outcome.dropped.first { $0.reason == "outbid for the same impression" })
        #expect(outbid.lossReason == LossReason.lostToHigherBid && outbid.impressionID == "1")
        #expect(outbid.price == 1 && outbid.seat == "s1" && outbid.lossURL == "http://n/loss?r=${AUCTION_LOSS}")
        #expect(outcome.dropped.allSatisfy { $0.lossURL == "http://n/loss?r=${AUCTION_LOSS}" })
        #expect(outcome.dropped.count == 8)
    }

    /// A bid under the impressions' floor is dropped with code 100 when the response is in the
    /// floor's currency; at the floor it is kept; in another currency it cannot be compared and
    /// is kept; no floor (or 0) drops nothing for its price.
    @Test func aBidBelowTheFloorInItsCurrencyIsDroppedWithCode100() throws {
        func body(_ currency: String?) -> [UInt8] {
            let cur = currency.map { #""cur":"\#($0)","# } ?? ""
            return Array(
                (#"{"id":"r",\#(cur)"seatbid":[{"seat":"s","bid":["#
                    + [
                        Self.bid(impression: "1", price: 0.49),
                        Self.bid(impression: "2", price: 0.5),
                        Self.bid(impression: "3", price: 0.99, extra: #","lurl":"http://n/l""#),
                    ].joined(separator: ",") + "]}]}").utf8)
        }
        let floor = BidResponseParser.Floor(price: 1, currency: "USD")
        let usd = try BidResponseParser.parse(body(nil), layout: .standard, floor: floor)
        #expect(usd.bids.isEmpty)
        #expect(usd.dropped.map(\.lossReason) == [100, 100, 100])
        #expect(
            usd.dropped.map(\.reason) == [
                "bid price 0.49 is below the floor 1.0", "bid price 0.5 is below the floor 1.0",
                "bid price 0.99 is below the floor 1.0",
            ])
        #expect(usd.dropped[2].lossURL == "http://n/l" && usd.dropped[2].price == 0.99)
        let half = try BidResponseParser.parse(
            body("usd"), layout: .standard, floor: .init(price: 0.5, currency: "USD"))
        #expect(half.bids.map(\.impressionID) == ["2", "3"], "at the floor is kept; the currency in any case")
        #expect(half.dropped.map(\.impressionID) == ["1"] && half.dropped.map(\.lossReason) == [LossReason.belowFloor])
        let euro = try BidResponseParser.parse(body("EUR"), layout: .standard, floor: floor)
        #expect(euro.bids.count == 3 && euro.dropped.isEmpty, "another currency is not compared")
        let none = try BidResponseParser.parse(body(nil), layout: .standard, floor: .init(price: 0))
        #expect(none.bids.count == 3)
        #expect(try BidResponseParser.parse(body(nil), layout: .standard).bids.count == 3)
    }

    @Test func emptyBannerAndNonVASTVideoMarkupHaveTheirCodes() throws {
        let text = """
            {"seatbid":[{"bid":[
            {"id":"e","impid":"1","price":1,"mtype":1,"adm":"  "},
            {"id":"v","impid":"2","price":1,"mtype":2,"adm":"<div>no vast</div>"}
            ]}]}
            """
        let outcome = try BidResponseParser.parse(Array(text.utf8), layout: .standard, media: [.banner, .video])
        #expect(outcome.dropped.map(\.lossReason) == [LossReason.missingMarkup, LossReason.incorrectCreativeFormat])
    }

    /// Found by the bid-response fuzz target: an image at the main image's id that the
    /// response types as something else is not the main image.
    @Test func anImageTypedOtherwiseAtTheMainImagesIDDoesNotSatisfyIt() throws {
        let wrongType =
            #"{"assets":[{"id":1,"title":{"text":"H"}},{"id":3,"img":{"type":2,"url":"i"}}],"link":{"url":"u"}}"#
        let body = #"{"seatbid":[{"bid":["# + Self.bid(impression: "1", adm: wrongType) + "]}]}"
        let outcome = try BidResponseParser.parse(Array(body.utf8), layout: .standard)
        #expect(outcome.bids.isEmpty)
        #expect(outcome.dropped.first?.reason.contains("required asset 3") == true)
    }

    @Test func sizeExtremesAreHandled() throws {
        let deep = String(repeating: "[", count: 10_000)
        #expect(throws: BidResponseParser.ParseError.self) {
            try BidResponseParser.parse(Array(deep.utf8), layout: .standard)
        }
        let many =
            #"{"seatbid":[{"bid":["# + (1...2000).map { Self.bid(impression: String($0)) }.joined(separator: ",")
            + "]}]}"
        let outcome = try BidResponseParser.parse(Array(many.utf8), layout: .standard)
        #expect(outcome.bids.count == 2000)
    }
}

/// A Swift string as a JSON string literal.
func JSONWriterQuoted(_ text: String) -> String {
    encode(.string(text))
}
