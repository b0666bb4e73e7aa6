import AdLoaderCore
import AdLoaderHTTP
import AdLoaderOpenRTB

/// Fuzzes the OpenRTB bid-response parser: the input is an exchange's HTTP body. Parsing must
/// return an outcome or throw ``BidResponseParser/ParseError`` — never trap — and every bid it
/// keeps must be usable: a native bid a title, a click URL, a main image (required by the
/// standard layout); a banner bid non-empty markup kept byte for byte; a video bid a VAST
/// document; every bid a medium asked for (its `mtype` when it has one), a finite price, an
/// impression asked for, one bid per impression. The body is read as JSON once and its bids as
/// a native batch, a full-screen multi-format batch (banner, video, native) and a video batch,
/// each with a floor of 0.5 USD (no bid under it kept from a USD response); every dropped bid
/// has a loss reason code. The source's classification of the same body (as
/// an HTTP 200, parsing it again) must agree with one of the batches, picked by the input's
/// length; and the request builder's output for a tag made of the input, for one format picked
/// the same way, must stay one JSON document that the parser's JSON reader accepts.
///
/// Speed: each input costs two JSON reads of the body and one of a request (it was six and
/// five, with five builders made per input: 62 exec/s).
public enum BidResponseFuzz: FuzzTarget {
    public static let name = "bid-response"
    static let impressions: Set<String> = ["1", "2", "3", "4", "5"]

    static let batches: [[OpenRTBMedia]] = [[.native], [.banner, .video, .native], [.video]]

    /// Made once: the configuration does not depend on the input.
    static let builder: BidRequestBuilder = {
        var configuration = OpenRTBSource.Configuration()
        configuration.interstitialMedia = ["banner", "video", "native"]
        return BidRequestBuilder(configuration: configuration)
    }()
    static let codes: Set<Int> = [
        LossReason.invalidBidResponse, LossReason.missingMarkup, LossReason.missingBidPrice,
        LossReason.belowFloor, LossReason.lostToHigherBid, LossReason.incorrectCreativeFormat,
    ]
    /// Every batch's floor: a bid under it in a USD response is dropped (100), never kept.
    static let floor = BidResponseParser.Floor(price: 0.5, currency: "USD")

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let body = Array(input)
        let read = Result { () throws(BidResponseParser.ParseError) in try BidResponseParser.document(of: body) }
        var outcomes: [BidResponseParser.Outcome?] = []
        for media in batches {
            guard case .success(let document) = read else {
                outcomes.append(nil)
                continue
            }
            let outcome = try? BidResponseParser.parse(
                document: document, layout: .standard, impressionIDs: impressions, media: media, floor: floor)
            if let outcome { try check(outcome, media: media) }
            outcomes.append(outcome)
        }
        let pick = body.count % batches.count
        let response = HTTPResponse(status: 200, headers: [HTTPHeader("content-type", "application/json")], body: body)
        switch OpenRTBSource.classify(
            .success(response), impressionIDs: impressions, media: batches[pick], floor: floor)
        {
        case .success(let outcome):
            guard outcome == outcomes[pick] else { throw FuzzFailure("classification disagrees with the parser") }
        case .failure(let error):
            guard outcomes[pick] == nil, error.code == .final else {
                throw FuzzFailure("classified a parsed body as \(error)")
            }
        }
        let tag = String(decoding: body.prefix(256), as: UTF8.self)
        let format = AdFormat.allCases[body.count % AdFormat.allCases.count]
        let request = builder.build(
            AdRequest(adUnitID: tag, format: format, keywords: [tag], targeting: [tag: tag]), count: 2, id: tag)
        do {
            _ = try BidResponseParser.document(of: Array(request.utf8))
        } catch {
            throw FuzzFailure(
                "the request builder wrote invalid JSON for \(format), tag \(tag.debugDescription): \(error)")
        }
    }

    private static func check(_ outcome: BidResponseParser.Outcome, media: [OpenRTBMedia]) throws(FuzzFailure) {
        var seen: Set<String> = []
        for bid in outcome.bids {
            guard media.contains(bid.media) else { throw FuzzFailure("kept a \(bid.media) bid, asked \(media)") }
            switch bid.creative {
            case .native(let content):
                guard bid.media == .native, !content.headline.isEmpty, !content.clickURL.isEmpty,
                    content.image != nil
                else { throw FuzzFailure("kept a native bid without title, click URL or main image: \(bid)") }
            case .fullScreen(let creative):
                switch (bid.media, creative.media) {
                case (.banner, .markup(let markup)):
                    guard markup.contains(where: { !$0.isWhitespace }) else {
                        throw FuzzFailure("kept a banner bid with empty markup")
                    }
                case (.video, .vastXML(let document)):
                    guard document.contains("<VAST") else { throw FuzzFailure("kept a video bid without VAST") }
                default: throw FuzzFailure("kept a \(bid.media) bid with creative \(creative.media)")
                }
            }
            guard bid.price.isFinite, bid.price >= 0 else {
                throw FuzzFailure("kept a bid with price \(bid.price)")
            }
            guard bid.price >= floor.price || outcome.currency.uppercased() != floor.currency else {
                throw FuzzFailure("kept a bid of \(bid.price) \(outcome.currency) under the floor")
            }
            guard impressions.contains(bid.impressionID), seen.insert(bid.impressionID).inserted else {
                throw FuzzFailure("kept a second bid or an unknown impression \(bid.impressionID)")
            }
        }
        for dropped in outcome.dropped where !codes.contains(dropped.lossReason) {
            throw FuzzFailure("dropped a bid with loss reason \(dropped.lossReason): \(dropped)")
        }
    }
}
