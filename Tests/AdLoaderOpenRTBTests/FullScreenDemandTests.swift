import AdLoaderCore
import AdLoaderJSON
import Testing

@testable import AdLoaderOpenRTB

/// Interstitial, rewarded and app-open demand: the impressions written for each format and the
/// banner and video bids read back, from prebid-server's own adapter payloads
/// (fixtures/SOURCES.md) and from bodies made to break the rules.
struct FullScreenDemandTests {
    func build(_ format: AdFormat, _ configure: (inout OpenRTBSource.Configuration) -> Void = { _ in }) throws
        -> [JSONValue]
    {
        var configuration = OpenRTBSource.Configuration()
        configure(&configuration)
        let text = BidRequestBuilder(configuration: configuration)
            .build(AdRequest(adUnitID: "screen", format: format), count: 2, id: "a")
        return try #require(try JSONValue.parse(text)["imp"]?.array)
    }

    /// The mocked exchange body of a fixture.
    func body(_ name: String) throws -> [UInt8] {
        let document = try fixture(name)
        let calls = try #require(document["httpCalls"]?.array)
        return Array(encode(try #require(calls.first?["mockResponse"]?["body"])).utf8)
    }

    @Test func nativeImpressionsCarryNoFullScreenFlags() throws {
        for imp in try build(.native) {
            #expect(imp["native"] != nil && imp["banner"] == nil && imp["video"] == nil)
            #expect(imp["instl"] == nil && imp["rwdd"] == nil)
        }
    }

    @Test func interstitialAsksForBannerAndVideoInOneImpressionByDefault() throws {
        for imp in try build(.interstitial) {
            #expect(imp["instl"]?.integer == 1 && imp["rwdd"] == nil)
            let sizes = try #require(imp["banner"]?["format"]?.array).map {
                "\($0["w"]?.integer ?? 0)x\($0["h"]?.integer ?? 0)"
            }
            #expect(sizes == ["320x480", "480x320", "768x1024", "1024x768"])
            #expect(imp["banner"]?["pos"]?.integer == 7)
            let video = try #require(imp["video"])
            #expect(video["mimes"]?.array?.compactMap(\.string) == ["video/mp4"])
            #expect(video["protocols"]?.array?.compactMap(\.integer) == [2, 3, 5, 6, 7, 8])
            #expect(video["w"]?.integer == 320 && video["h"]?.integer == 480)
            #expect(video["maxduration"]?.integer == 30 && video["plcmt"]?.integer == 3)
            #expect(video["skip"] == nil)
            #expect(imp["native"] == nil)
        }
    }

    @Test func interstitialMayAskForNativeAssets() throws {
        let imps = try build(.interstitial) { $0.interstitialMedia = ["native"] }
        for imp in imps {
            #expect(imp["instl"]?.integer == 1)
            #expect(imp["native"]?["ver"]?.string == "1.2" && imp["banner"] == nil && imp["video"] == nil)
        }
    }

    @Test func rewardedIsAnUnskippableVideoWithRwdd() throws {
        for imp in try build(.rewarded, { $0.videoMimes = ["video/mp4", "video/webm"] }) {
            #expect(imp["instl"]?.integer == 1 && imp["rwdd"]?.integer == 1)
            #expect(imp["video"]?["skip"]?.integer == 0)
            #expect(imp["video"]?["mimes"]?.array?.compactMap(\.string) == ["video/mp4", "video/webm"])
            #expect(imp["banner"] == nil && imp["native"] == nil)
        }
    }

    @Test func appOpenIsFullScreenDisplayOrNative() throws {
        for imp in try build(.appOpen) {
            #expect(imp["instl"]?.integer == 1 && imp["banner"] != nil && imp["video"] == nil)
        }
        for imp in try build(.appOpen, { $0.appOpenMedia = ["native"] }) {
            #expect(imp["instl"]?.integer == 1 && imp["native"] != nil && imp["banner"] == nil)
        }
    }

    @Test func formatsFollowTheMediaLists() throws {
        var configuration = OpenRTBSource.Configuration()
        #expect(configuration.formats == AdFormat.allCases)
        configuration.rewardedMedia = []
        configuration.appOpenMedia = []
        #expect(configuration.formats == [.native, .interstitial])
        try configuration.validate()
    }

    /// A bad value of each media setting, and the key its refusal names.
    static func spoil(_ c: inout OpenRTBSource.Configuration, case n: Int) -> String {
        switch n {
        case 0:
            c.rewardedMedia = ["banner"]
            return "rewardedMedia"
        case 1:
            c.appOpenMedia = ["video"]
            return "appOpenMedia"
        case 2:
            c.interstitialMedia = ["audio"]
            return "interstitialMedia"
        case 3:
            c.interstitialMedia = ["video", "video"]
            return "interstitialMedia"
        case 4:
            c.fullScreenSizes = ["320x"]
            return "fullScreenSizes"
        case 5:
            c.fullScreenSizes = []
            return "fullScreenSizes"
        case 6:
            c.videoMimes = ["mp4"]
            return "videoMimes"
        case 7:
            c.videoProtocols = [0]
            return "videoProtocols"
        default:
            c.videoMaximumDuration = 0
            return "videoMaximumDuration"
        }
    }

    @Test(arguments: 0..<9) func badMediaSettingsAreRefusedNamingTheKey(case n: Int) {
        var configuration = OpenRTBSource.Configuration()
        let key = Self.spoil(&configuration, case: n)
        #expect(throws: ConfigError.self) { try configuration.validate() }
        do {
            try configuration.validate()
        } catch {
            #expect(error.field == "sources.openrtb.\(key)")
        }
    }

    @Test func aRealBannerBidKeepsItsHTMLByteForByte() throws {
        let outcome = try BidResponseParser.parse(
            try body("smaato/simple-banner-app.json"), layout: .standard, media: [.banner])
        let bid = try #require(outcome.bids.first)
        #expect(outcome.dropped.isEmpty && bid.media == .banner)
        guard case .fullScreen(let creative) = bid.creative, case .markup(let html) = creative.media else {
            Issue.record("not a markup creative: \(bid.creative)")
            return
        }
        #expect(
            html
                == #"<a rel="nofollow" href="https://prebid.net/click"><img src="https://prebid.net/images/image.png" alt="" width="480" height="320" /></a>"#
        )
        #expect(creative.width == 350 && creative.height == 50 && creative.orientation == .landscape)
        #expect(bid.creativeID == "CR69381" && bid.advertiserDomains == ["smaato.com"])
    }

    @Test func aRealVideoBidIsItsVASTDocument() throws {
        // The request asked for video only, and the bid has no mtype: it is read as video.
        let outcome = try BidResponseParser.parse(try body("smaato/video-app.json"), layout: .standard, media: [.video])
        let bid = try #require(outcome.bids.first)
        guard case .fullScreen(let creative) = bid.creative, case .vastXML(let document) = creative.media else {
            Issue.record("not a VAST creative: \(bid.creative)")
            return
        }
        #expect(
            document
                == #"<?xml version="1.0" encoding="UTF-8" standalone="no"?><VAST version="2.0"></VAST>"#)
        #expect(creative.width == 1024 && creative.height == 768)
        // In a multi-format impression the markup says it is video.
        let mixed = try BidResponseParser.parse(
            try body("smaato/video-app.json"), layout: .standard, media: [.banner, .video])
        #expect(mixed.bids.first?.media == .video)
    }

    @Test func aVideoBidWhoseMarkupIsNotVASTIsDroppedWithItsReason() throws {
        let outcome = try BidResponseParser.parse(
            try body("openx/video-rewarded.json"), layout: .standard, media: [.video])
        #expect(outcome.bids.isEmpty)
        #expect(outcome.dropped.map(\.reason) == ["video adm is not a VAST document (no <VAST element)"])
    }

    static let vast = #"<VAST version=\"4.0\"><Ad><InLine></InLine></Ad></VAST>"#

    @Test func mtypeWinsOverTheMarkupAndMustBeAskedFor() throws {
        let text = """
            {"id":"r","seatbid":[{"bid":[
            {"id":"b","impid":"1","price":1,"mtype":1,"adm":"<div>\(Self.vast)</div>"},
            {"id":"v","impid":"2","price":1,"mtype":2,"adm":"\(Self.vast)"},
            {"id":"n","impid":"3","price":1,"mtype":4,"adm":"<html></html>"},
            {"id":"a","impid":"4","price":1,"mtype":3,"adm":"\(Self.vast)"},
            {"id":"x","impid":"5","price":1,"mtype":"2","adm":"\(Self.vast)"}
            ]}]}
            """
        let outcome = try BidResponseParser.parse(Array(text.utf8), layout: .standard, media: [.banner, .video])
        #expect(outcome.bids.map(\.bidID) == ["b", "v"])
        #expect(outcome.bids.map(\.media) == [.banner, .video])
        #expect(
            outcome.dropped.map(\.reason) == [
                "bid has mtype 4 (native), not asked for (banner, video)",
                "bid has mtype 3, not 1 (banner), 2 (video) or 4 (native)",
                #"bid has mtype "2", not 1 (banner), 2 (video) or 4 (native)"#,
            ])
    }

    @Test func bannerMarkupMustBeANonEmptyString() throws {
        let text = """
            {"seatbid":[{"bid":[
            {"id":"e","impid":"1","price":1,"adm":"  \\n "},
            {"id":"o","impid":"2","price":1,"mtype":1,"adm":{"html":"x"}},
            {"id":"k","impid":"3","price":1,"adm":"<img src='x'>","w":0,"h":-4}
            ]}]}
            """
        let outcome = try BidResponseParser.parse(Array(text.utf8), layout: .standard, media: [.banner])
        #expect(outcome.bids.map(\.bidID) == ["k"])
        #expect(outcome.bids.first?.creative.fullScreenCreative?.orientation == .any)
        #expect(
            outcome.dropped.map(\.reason) == ["banner adm is empty", "banner adm is an object, not a string of markup"])
    }

    @Test func aNativeBatchDropsBannerMarkup() throws {
        let text = #"{"seatbid":[{"bid":[{"id":"b","impid":"1","price":1,"mtype":1,"adm":"<div/>"}]}]}"#
        let outcome = try BidResponseParser.parse(Array(text.utf8), layout: .standard)
        #expect(outcome.bids.isEmpty)
        #expect(outcome.dropped.first?.reason == "bid has mtype 1 (banner), not asked for (native)")
    }
}
