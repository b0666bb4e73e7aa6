public import AdLoaderCore
import AdLoaderJSON

/// Reads an OpenRTB 2.x BidResponse into bids with native creatives: pure, and a fuzz target.
///
/// A body that is empty, `{}`, has no (or an empty) `seatbid`, or carries a no-bid reason
/// (`nbr`) is a no-fill. Each `seatbid[].bid[]` becomes a ``Bid`` when its markup (`adm`, a
/// string or an object, Native 1.0–1.2, wrapped in `{"native": ...}` or not) has every asset
/// the layout marks required, a title and a click URL; otherwise it is dropped with a reason
/// (``Outcome/dropped``). One bid per impression is kept, the highest priced.
public enum BidResponseParser {
    /// Why a document is not a BidResponse at all.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    /// One usable bid.
    public struct Bid: Hashable, Sendable {
        public var impressionID: String
        public var bidID: String
        public var seat: String
        public var adID: String
        public var creativeID: String
        public var price: Double
        public var advertiserDomains: [String]
        /// `cat`: the creative's IAB content categories; empty when absent.
        public var categories: [String] = []
        /// `bid.exp` in seconds, when positive.
        public var expirySeconds: Int?
        /// `nurl`, `burl`, `lurl`; empty when absent.
        public var winURL: String
        public var billingURL: String
        public var lossURL: String
        public var content: NativeAdContent
    }

    /// A bid that was not kept, and why.
    public struct DroppedBid: Hashable, Sendable {
        public var bidID: String
        public var reason: String
    }

    /// What a response held.
    public struct Outcome: Hashable, Sendable {
        /// `id` of the response (the auction id).
        public var responseID = ""
        /// `bidid`, the exchange's id of this response; empty when absent.
        public var bidResponseID = ""
        /// `cur`, USD when absent.
        public var currency = "USD"
        public var bids: [Bid] = []
        public var dropped: [DroppedBid] = []
        /// `nbr` when the exchange gave one.
        public var noBidReason: Int?

        /// Nothing usable came back (no bids, or all dropped).
        public var isNoFill: Bool { bids.isEmpty }
    }

    /// Parses a response body.
    /// - Parameters:
    ///   - body: the HTTP body (UTF-8 JSON).
    ///   - layout: the native assets the request asked for.
    ///   - impressionIDs: the request's imp ids; bids for others are dropped. Nil accepts any.
    /// - Throws: ``ParseError`` when the body is not JSON or not a BidResponse object.
    public static func parse(
        _ body: [UInt8], layout: NativeAssetLayout, impressionIDs: Set<String>? = nil
    ) throws(ParseError) -> Outcome {
        guard body.contains(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) else { return Outcome() }
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes: body)
        } catch {
            throw ParseError(message: "malformed JSON at byte \(error.offset): \(error.message)")
        }
        guard document.members != nil else { throw ParseError(message: "not a JSON object but \(document.kind)") }
        var outcome = Outcome()
        outcome.responseID = document["id"]?.string ?? ""
        outcome.bidResponseID = document["bidid"]?.string ?? ""
        outcome.currency = document["cur"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "USD"
        outcome.noBidReason = document["nbr"]?.integer
        guard let seatbids = document["seatbid"], !seatbids.isNull else { return outcome }
        guard let seats = seatbids.array else { throw ParseError(message: "seatbid is \(seatbids.kind), not an array") }
        var best: [String: Int] = [:]
        for seatbid in seats {
            let seat = seatbid["seat"]?.string ?? ""
            for item in seatbid["bid"]?.array ?? [] {
                let bidID = item["id"]?.string ?? ""
                switch bid(item, seat: seat, layout: layout, impressionIDs: impressionIDs) {
                case .success(let bid):
                    if let index = best[bid.impressionID] {
                        let other = outcome.bids[index]
                        let (keep, drop) = bid.price > other.price ? (bid, other) : (other, bid)
                        outcome.bids[index] = keep
                        outcome.dropped.append(DroppedBid(bidID: drop.bidID, reason: "outbid for the same impression"))
                    } else {
                        best[bid.impressionID] = outcome.bids.count
                        outcome.bids.append(bid)
                    }
                case .failure(let reason):
                    outcome.dropped.append(DroppedBid(bidID: bidID, reason: reason.message))
                }
            }
        }
        return outcome
    }

    private static func bid(
        _ item: JSONValue, seat: String, layout: NativeAssetLayout, impressionIDs: Set<String>?
    ) -> Result<Bid, ParseError> {
        guard item.members != nil else { return .failure(ParseError(message: "bid is not an object")) }
        guard let impressionID = item["impid"]?.string, !impressionID.isEmpty else {
            return .failure(ParseError(message: "bid has no impid"))
        }
        if let impressionIDs, !impressionIDs.contains(impressionID) {
            return .failure(ParseError(message: "bid for unknown impression \"\(impressionID)\""))
        }
        guard let price = item["price"]?.number, price >= 0, price.isFinite else {
            return .failure(ParseError(message: "bid has no valid price"))
        }
        guard let markup = item["adm"], !markup.isNull else { return .failure(ParseError(message: "bid has no adm")) }
        let content: NativeAdContent
        switch NativeMarkup.content(of: markup, layout: layout) {
        case .success(let value): content = value
        case .failure(let error): return .failure(error)
        }
        let exp = item["exp"]?.integer
        return .success(
            Bid(
                impressionID: impressionID, bidID: item["id"]?.string ?? "", seat: seat,
                adID: item["adid"]?.string ?? "",
                creativeID: item["crid"]?.string ?? "", price: price,
                advertiserDomains: item["adomain"]?.array?.compactMap(\.string) ?? [],
                categories: item["cat"]?.array?.compactMap(\.string) ?? [],
                expirySeconds: exp.flatMap { $0 > 0 ? $0 : nil }, winURL: item["nurl"]?.string ?? "",
                billingURL: item["burl"]?.string ?? "", lossURL: item["lurl"]?.string ?? "", content: content))
    }
}
