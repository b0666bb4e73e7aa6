import AdLoaderCore
import AdLoaderHTTP
import AdLoaderOpenRTB

/// Fuzzes the OpenRTB bid-response parser: the input is an exchange's HTTP body. Parsing must
/// return an outcome or throw ``BidResponseParser/ParseError`` — never trap — and every bid it
/// keeps must be usable: a title, a click URL, a main image (required by the standard layout),
/// a finite price, an impression asked for, one bid per impression. The same body through the
/// source's classification must agree, and the request builder's output for a tag made of the
/// input must stay one JSON document that the parser's JSON reader accepts.
public enum BidResponseFuzz: FuzzTarget {
    public static let name = "bid-response"
    static let impressions: Set<String> = ["1", "2", "3", "4", "5"]

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let body = Array(input)
        let parsed: BidResponseParser.Outcome?
        do {
            parsed = try BidResponseParser.parse(body, layout: .standard, impressionIDs: impressions)
        } catch {
            parsed = nil
        }
        if let outcome = parsed {
            var seen: Set<String> = []
            for bid in outcome.bids {
                guard !bid.content.headline.isEmpty, !bid.content.clickURL.isEmpty, bid.content.image != nil else {
                    throw FuzzFailure("kept a bid without title, click URL or main image: \(bid)")
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
        switch OpenRTBSource.classify(.success(response), impressionIDs: impressions) {
        case .success(let outcome):
            guard outcome == parsed else { throw FuzzFailure("classification disagrees with the parser") }
        case .failure(let error):
            guard parsed == nil, error.code == .final else { throw FuzzFailure("classified a parsed body as \(error)") }
        }
        let tag = String(decoding: body.prefix(256), as: UTF8.self)
        let request = BidRequestBuilder(configuration: OpenRTBSource.Configuration())
            .build(AdRequest(adUnitID: tag, keywords: [tag], targeting: [tag: tag]), count: 2, id: tag)
        do {
            _ = try BidResponseParser.parse(Array(request.utf8), layout: .standard)
        } catch {
            throw FuzzFailure("the request builder wrote invalid JSON for tag \(tag.debugDescription): \(error)")
        }
    }
}
