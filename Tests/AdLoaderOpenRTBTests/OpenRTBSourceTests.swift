import AdLoaderCore
import AdLoaderHTTP
import AdLoaderJSON
import AdLoaderLogging
import AdLoaderTestSupport
import Testing

@testable import AdLoaderOpenRTB

struct OpenRTBSourceTests {
    let clock = ManualClock()
    let client = FakeHTTPClient()
    let notices = FakeHTTPClient()
    let log = CapturingLogHandler()

    func makeSource(_ configure: (inout OpenRTBSource.Configuration) -> Void = { _ in }) throws -> OpenRTBSource {
        var configuration = OpenRTBSource.Configuration()
        configuration.endpoint = "http://exchange.test/openrtb2/auction"
        configure(&configuration)
        return try OpenRTBSource(
            configuration: configuration, client: client, noticeClient: notices, clock: clock, scheduler: clock,
            logger: Logger(level: .debug, handler: log))
    }

    static func response(_ impressions: [String], extra: String = "") -> HTTPResponse {
        let bids = impressions.map {
            BidResponseParserTests.bid(
                impression: $0, price: 1.25,
                extra:
                    #","nurl":"http://n/win?p=${AUCTION_PRICE}","burl":"http://n/bill?p=${AUCTION_PRICE}&b=${AUCTION_BID_ID}","#
                    + #""lurl":"http://n/loss?r=${AUCTION_LOSS}&b=${AUCTION_BID_ID}","crid":"c\#($0)","adomain":["adv.example"]\#(extra)"#
            )
        }
        let body = #"{"id":"r1","cur":"USD","seatbid":[{"seat":"s","bid":["# + bids.joined(separator: ",") + "]}]}"
        return HTTPResponse(
            status: 200, headers: [HTTPHeader("content-type", "application/json")], body: Array(body.utf8))
    }

    /// Loads `count` ads answered by `response`; returns the result.
    func load(_ source: OpenRTBSource, count: Int, answer: HTTPResponse) -> Result<[DeliveredAd], UpstreamError>? {
        var result: Result<[DeliveredAd], UpstreamError>?
        source.loadAds(AdRequest(adUnitID: "feed"), count: count) { result = $0 }
        #expect(result == nil, "never answered from inside loadAds")
        client.answer(.success(answer))
        return result
    }

    @Test func sendsOneBidRequestPerBatchWithTheOpenRTBHeaders() throws {
        let source = try makeSource()
        source.loadAds(AdRequest(adUnitID: "feed"), count: 4) { _ in }
        source.loadAds(AdRequest(adUnitID: "feed"), count: 2) { _ in }
        #expect(client.requests.count == 2)
        let request = client.requests[0]
        #expect(request.method == .post && request.url == "http://exchange.test/openrtb2/auction")
        #expect(request.headers.contains(HTTPHeader("x-openrtb-version", "2.6")))
        #expect(request.headers.contains(HTTPHeader("Content-Type", "application/json")))
        let first = try JSONValue.parse(bytes: request.body)
        let second = try JSONValue.parse(bytes: client.requests[1].body)
        #expect(first["imp"]?.array?.count == 4 && second["imp"]?.array?.count == 2)
        #expect(first["id"] != second["id"], "a fresh id per request")
        #expect(source.stats.requests == 2)
    }

    /// Only requests the exchange could have received count as sent: one that failed while
    /// connecting does not (a timeout after the request went out does).
    @Test func aRequestThatNeverLeftIsNotCountedAsSent() throws {
        let source = try makeSource()
        var results: [Result<[DeliveredAd], UpstreamError>] = []
        for _ in 0..<3 { source.loadAds(AdRequest(adUnitID: "feed"), count: 1) { results.append($0) } }
        #expect(source.stats.requests == 3)
        client.answer(.failure(HTTPError(code: .connectionFailed, message: "refused")))
        client.answer(.failure(HTTPError(code: .timedOut, message: "connect timeout", requestSent: false)))
        client.answer(.failure(HTTPError(code: .timedOut, message: "slow answer", requestSent: true)))
        #expect(results.count == 3)
        #expect(source.stats.requests == 1)
        #expect(source.stats.unsent == 2)
        #expect(source.stats.failures == 3)
    }

    @Test func bidsBecomeAdsWithContextExpiryAndSubstitutedTrackers() throws {
        let source = try makeSource()
        let ads = try #require(
            try load(source, count: 3, answer: Self.response(["1", "3"], extra: #","exp":60"#))?.get())
        #expect(ads.count == 2, "a partial fill is normal")
        let ad = ads[0]
        let content = try #require(ad.creative.nativeContent)
        #expect(content.headline == "Headline" && content.advertiser == "Brand")
        #expect(content.impressionTrackers == ["https://it?p=1.25"])
        #expect(content.clickTrackers == ["https://ct?p=1.25"])
        #expect(ad.sourceExpiry == clock.now + .seconds(60))
        let context = try #require(ad.context as? BidContext)
        #expect(context.winURL.hasPrefix("http://n/bill"), "burl wins over nurl")
        #expect(context.creativeID == "c1" && context.advertiserDomains == ["adv.example"])
        #expect(source.stats.bids == 2)
    }

    /// The feed plan's separation reads `adomain`, `cat` and `crid` from the delivered ad.
    @Test func advertiserDomainsCategoriesAndCreativeIDReachTheAd() throws {
        let source = try makeSource()
        let ads = try #require(
            try load(source, count: 2, answer: Self.response(["1", "2"], extra: #","cat":["IAB19-6","","IAB19"]"#))?
                .get())
        #expect(ads.count == 2)
        #expect(ads[0].advertiserDomains == ["adv.example"])
        #expect(ads[0].categories == ["IAB19-6", "IAB19"], "empty categories are left out")
        #expect(ads[0].creativeID == "s/c1" && ads[1].creativeID == "s/c2")
        let plain = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get().first)
        #expect(plain.categories.isEmpty, "no cat: none")
    }

    @Test func billingNoticeFiresOnceAtTheFirstShowWithThePrice() throws {
        let source = try makeSource()
        let delivered = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get().first)
        var ad = Ad(
            id: "a", adUnitID: "feed", loader: "l", creative: delivered.creative, loadedAt: clock.now,
            expiresAt: clock.now + .seconds(60), sourceContext: delivered.context)
        ad.showCount = 1
        source.adShown(ad)
        ad.showCount = 2
        source.adShown(ad)
        #expect(notices.requests.map(\.url) == ["http://n/bill?p=1.25&b=b1"])
        #expect(notices.requests.first?.method == .get)
        notices.answer(.success(HTTPResponse(status: 200)))
        #expect(source.stats.noticesSent == 1)
    }

    @Test func theBillingNoticeForwardsTheDeviceOfTheShownReturn() throws {
        let source = try makeSource()
        let delivered = try #require(try load(source, count: 2, answer: Self.response(["1", "2"]))?.get())
        func ad(_ index: Int) -> Ad {
            var ad = Ad(
                id: "a\(index)", adUnitID: "feed", loader: "l", creative: delivered[index].creative,
                loadedAt: clock.now, expiresAt: clock.now + .seconds(60), sourceContext: delivered[index].context)
            ad.showCount = 1
            return ad
        }
        source.adShown(ad(0), device: ImpressionDevice(ip: "203.0.113.7", userAgent: "Mozilla/5.0 (Android 14)"))
        source.adShown(ad(1))
        let headers = notices.requests.map { $0.headers.map { "\($0.name): \($0.value)" } }
        #expect(
            headers == [
                [
                    "X-Forwarded-For: 203.0.113.7", "X-Device-IP: 203.0.113.7", "User-Agent: Mozilla/5.0 (Android 14)",
                    "X-Device-User-Agent: Mozilla/5.0 (Android 14)",
                ],
                [],
            ])
    }

    @Test func lossNoticeCarriesTheReasonCodeAndIsNotFiredForShownAds() throws {
        let source = try makeSource()
        let delivered = try #require(try load(source, count: 2, answer: Self.response(["1", "2"]))?.get())
        func ad(_ index: Int, shown: Int) -> Ad {
            Ad(
                id: "a\(index)", adUnitID: "feed", loader: "l", creative: delivered[index].creative,
                loadedAt: clock.now,
                expiresAt: clock.now, showCount: shown, sourceContext: delivered[index].context)
        }
        source.adDropped(ad(0, shown: 0), reason: .expired)
        source.adDropped(ad(1, shown: 1), reason: .expired)
        #expect(notices.requests.map(\.url) == ["http://n/loss?r=2&b=b1"])
    }

    /// A bid dropped while its response is read is lost too: its `lurl` fires at once with the
    /// bid's macros and the reason's code; a dropped bid without `lurl` fires nothing.
    @Test func bidsDroppedWhileParsingFireTheirLossNoticesWithTheirCodes() throws {
        let source = try makeSource()
        let lurl =
            #","lurl":"http://n/loss?r=${AUCTION_LOSS}&b=${AUCTION_BID_ID}&p=${AUCTION_PRICE}&i=${AUCTION_IMP_ID}""#
        let body =
            #"{"id":"r1","seatbid":[{"seat":"s","bid":["#
            + [
                BidResponseParserTests.bid(impression: "1", price: 3),
                BidResponseParserTests.bid(impression: "1", price: 0.5, extra: lurl).replacing(
                    #""b1""#, with: #""low""#),
                BidResponseParserTests.bid(impression: "2", extra: #","mtype":1"# + lurl),
                #"{"id":"na","impid":"3","price":1"# + lurl + "}",
                #"{"id":"quiet","impid":"4","price":1}"#,
            ].joined(separator: ",") + "]}]}"
        let answer = HTTPResponse(
            status: 200, headers: [HTTPHeader("content-type", "application/json")], body: Array(body.utf8))
        let delivered = try #require(try load(source, count: 4, answer: answer)?.get())
        #expect(delivered.count == 1)
        #expect(
            notices.requests.map(\.url) == [
                "http://n/loss?r=102&b=low&p=0.5&i=1", "http://n/loss?r=204&b=b2&p=1.5&i=2",
                "http://n/loss?r=7&b=na&p=1&i=3",
            ])
        #expect(source.stats.bidsDropped == 4)
        // Counted by code, and named by reason for adloader_source_bids_dropped_total (every
        // reason listed, zeros included).
        #expect(source.stats.bidsDroppedByCode == [102: 1, 204: 1, 7: 2])
        #expect(
            source.statistics?.bidsDroppedByReason == [
                "outbid": 1, "wrong_format": 1, "missing_markup": 2, "invalid_bid": 0, "missing_price": 0,
                "below_floor": 0,
            ])
    }

    /// The floor the BidRequest sent (the loader's, else the source's) drops a bid under it with
    /// loss reason 100, its `lurl` fired and the drop counted as `below_floor`.
    @Test func aBidUnderTheRequestsFloorIsDroppedAndItsLossNoticeSays100() throws {
        let source = try makeSource { $0.bidFloor = 2 }
        let delivered = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get())
        #expect(delivered.isEmpty, "1.25 is under the source's floor of 2")
        #expect(notices.requests.map(\.url) == ["http://n/loss?r=100&b=b1"])
        #expect(source.statistics?.bidsDroppedByReason["below_floor"] == 1)
        var request = AdRequest(adUnitID: "feed")
        request.bidFloor = 1
        var result: Result<[DeliveredAd], UpstreamError>?
        source.loadAds(request, count: 1) { result = $0 }
        client.answer(.success(Self.response(["1"])))
        #expect(try #require(result).get().count == 1, "the loader's floor of 1 replaces the source's")
        #expect(source.stats.bidsDroppedByCode == [LossReason.belowFloor: 1])
    }

    @Test func aFailedNoticeIsTriedEvery10SecondsForAMinuteThenCounted() throws {
        let source = try makeSource()
        let delivered = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get().first)
        let ad = Ad(
            id: "a", adUnitID: "feed", loader: "l", creative: delivered.creative, loadedAt: clock.now,
            expiresAt: clock.now + .seconds(1), showCount: 1, sourceContext: delivered.context)
        source.adShown(ad)
        notices.answer(.failure(HTTPError(code: .connectionFailed, message: "refused")))
        #expect(notices.requests.count == 1, "the next try waits the retry interval")
        clock.advance(by: .milliseconds(9_999))
        #expect(notices.requests.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(notices.requests.count == 2)
        for _ in 0..<5 {
            notices.answer(.success(HTTPResponse(status: 503)))
            clock.advance(by: .seconds(10))
        }
        #expect(notices.requests.count == 7, "1 + 6 tries: every 10 s for a minute")
        notices.answer(.failure(HTTPError(code: .timedOut, message: "slow")))
        clock.advance(by: .seconds(60))
        #expect(notices.requests.count == 7, "given up after the last try")
        #expect(Set(notices.requests.map(\.url)).count == 1)
        #expect(source.stats.noticesFailed == 1 && source.stats.noticesSent == 0 && source.stats.noticesRetried == 6)
        #expect(source.stats.noticesPending == 0)
    }

    @Test func theNoticeQueueIsBounded() throws {
        let source = try makeSource { $0.noticeQueueLimit = 2 }
        let delivered = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get().first)
        for index in 0..<5 {
            source.adShown(
                Ad(
                    id: "a\(index)", adUnitID: "feed", loader: "l", creative: delivered.creative, loadedAt: clock.now,
                    expiresAt: clock.now, showCount: 1, sourceContext: delivered.context))
        }
        #expect(notices.requests.count == 2)
        #expect(source.stats.noticesDropped == 3)
        notices.answer(.success(HTTPResponse(status: 204)))
        notices.answer(.success(HTTPResponse(status: 500)))
        #expect(source.stats.noticesSent == 1, "a 500 is not delivered: it waits for its next try, still in the queue")
        #expect(source.stats.noticesPending == 1)
    }

    @Test func missingRequiredAssetIsDroppedCountedAndLogged() throws {
        let source = try makeSource()
        let noImage = #"{"assets":[{"id":1,"title":{"text":"H"}}],"link":{"url":"u"}}"#
        let body = #"{"seatbid":[{"bid":["# + BidResponseParserTests.bid(impression: "1", adm: noImage) + "]}]}"
        let ads = try #require(
            try load(source, count: 1, answer: HTTPResponse(status: 200, body: Array(body.utf8)))?.get())
        #expect(ads.isEmpty)
        #expect(source.stats.bidsDropped == 1 && source.stats.noFills == 1)
        #expect(log.lines.contains { $0.contains("openrtb bid dropped") && $0.contains("required asset 3") })
    }

    @Test func finalFailuresAreLoggedWithTheExchangesMessage() throws {
        let source = try makeSource()
        let result = load(
            source, count: 1, answer: HTTPResponse(status: 400, body: Array("Invalid request: bad imp".utf8)))
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .final)
        #expect(log.lines.filter { $0.contains("Invalid request: bad imp") }.count == 1)
        #expect(source.stats.failures == 1)
    }

    @Test func closedSourceDropsNotices() throws {
        let source = try makeSource()
        let delivered = try #require(try load(source, count: 1, answer: Self.response(["1"]))?.get().first)
        source.close()
        source.adShown(
            Ad(
                id: "a", adUnitID: "feed", loader: "l", creative: delivered.creative, loadedAt: clock.now,
                expiresAt: clock.now,
                showCount: 1, sourceContext: delivered.context))
        #expect(notices.requests.isEmpty && source.stats.noticesDropped == 1)
    }
}
