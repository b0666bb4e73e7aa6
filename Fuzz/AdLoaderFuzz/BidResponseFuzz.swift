import AdLoaderCore
import AdLoaderHTTP
import AdLoaderOpenRTB

/// Fuzzes the OpenRTB bid-response parser: the input is an exchange's HTTP body. Parsing must
/// return an outcome or throw ``BidResponseParser/ParseError`` — never trap — and every bid it
/// keeps must be usable: a native bid a title, a click URL, a main image (required by the
/// standard layout); a banner bid non-empty markup kept byte for byte; a video bid a VAST
/// document; every bid a medium asked for (its `mtype` when it has one), a finite price, an
/// impression asked for, one bid per impression. The body is parsed as a native batch and as
/// a full-screen multi-format batch (banner, video, native). The same body through the
/// source's classification must agree, and the request builder's output for a tag made of the
/// input, for every format, must stay one JSON document that the parser's JSON reader accepts.
public enum BidResponseFuzz: FuzzTarget {
    public static let name = "bid-response"
    static let impressions: Set<String> = ["1", "2", "3", "4", "5"]

    static let batches: [[OpenRTBMedia]] = [[.native], [.banner, .video, .native], [.video]]

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let body = Array(input)
        for media in batches { try check(body, media: media) }
        let tag = String(decoding: body.prefix(256), as: UTF8.self)
        var configuration = OpenRTBSource.Configuration()
        configuration.interstitialMedia = ["banner", "video", "native"]
        for format in AdFormat.allCases {
            let request = BidRequestBuilder(configuration: configuration)
                .build(
                    AdRequest(adUnitID: tag, format: format, keywords: [tag], targeting: [tag: tag]), count: 2, id: tag)
            do {
                _ = try BidResponseParser.parse(Array(request.utf8), layout: .standard)
            } catch {
                throw FuzzFailure(
                    "the request builder wrote invalid JSON for \(format), tag \(tag.debugDescription): \(error)")
            }
        }
    }

    private static func check(_ body: [UInt8], media: [OpenRTBMedia]) throws(FuzzFailure) {
        let parsed: BidResponseParser.Outcome?
        do {
            parsed = try BidResponseParser.parse(body, layout: .standard, impressionIDs: impressions, media: media)
        } catch {
            parsed = nil
        }
        if let outcome = parsed {
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
                guard impressions.contains(bid.impressionID), seen.insert(bid.impressionID).inserted else {
                    throw FuzzFailure("kept a second bid or an unknown impression \(bid.impressionID)")
                }
            }
        }
        let response = HTTPResponse(status: 200, headers: [HTTPHeader("content-type", "application/json")], body: body)
        switch OpenRTBSource.classify(.success(response), impressionIDs: impressions, media: media) {
        case .success(let outcome):
            guard outcome == parsed else { throw FuzzFailure("classification disagrees with the parser") }
        case .failure(let error):
            guard parsed == nil, error.code == .final else { throw FuzzFailure("classified a parsed body as \(error)") }
        }
    }
}
