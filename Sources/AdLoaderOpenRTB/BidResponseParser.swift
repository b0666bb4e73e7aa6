public import AdLoaderCore
public import AdLoaderJSON

/// Reads an OpenRTB 2.x BidResponse into bids with their creatives: pure, and a fuzz target.
///
/// A body that is empty, `{}`, has no (or an empty) `seatbid`, or carries a no-bid reason
/// (`nbr`) is a no-fill. Each `seatbid[].bid[]` becomes a ``Bid`` when its medium is one the
/// impressions asked for and its markup is usable; otherwise it is dropped with a reason
/// (``Outcome/dropped``). The medium is `bid.mtype` (1 banner, 2 video, 4 native) when given,
/// else the one medium asked for, else read from the markup (a JSON object is native, a
/// document with `<VAST` video, other markup banner). Native markup (`adm`, a string or an
/// object, Native 1.0–1.2, wrapped in `{"native": ...}` or not) needs every asset the layout
/// marks required, a title and a click URL; banner markup (HTML) must not be empty; video
/// markup must be a VAST document. Banner and video markup is kept byte for byte as sent
/// (no macro is substituted: the client's renderer gets what the bidder wrote). One bid per
/// impression is kept, the highest priced. A bid priced under the impressions' floor (``Floor``)
/// is dropped with loss reason 100 when the response is in the floor's currency (one in another
/// currency cannot be compared and is kept: the exchange was asked for the floor's).
public enum BidResponseParser {
    /// The impressions' floor (`imp.bidfloor`, `imp.bidfloorcur`): a bid below `price` in a
    /// response of `currency` is dropped.
    public struct Floor: Hashable, Sendable {
        public var price: Double
        public var currency: String
        public init(price: Double, currency: String = "USD") {
            self.price = price
            self.currency = currency
        }
    }

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
        /// What the bid delivers: native assets, or banner (HTML) or video (VAST) markup.
        public var creative: AdCreative
        /// The bid's medium (its `mtype`, or as read from the markup).
        public var media: OpenRTBMedia = .native

        /// The native assets; empty for a banner or video bid.
        public var content: NativeAdContent { creative.nativeContent ?? NativeAdContent(headline: "") }
    }

    /// A bid that was not kept, and why: its loss notice (`lurl`) gets ``lossReason``.
    public struct DroppedBid: Hashable, Sendable {
        public var bidID: String
        public var reason: String
        /// The OpenRTB loss reason code (``LossReason``) its `lurl` is fired with.
        public var lossReason: Int
        /// `lurl` and the macro values the bid gave (empty, or 0, when it did not).
        public var lossURL: String
        public var impressionID: String
        public var seat: String
        public var adID: String
        public var price: Double

        public init(
            bidID: String, reason: String, lossReason: Int = LossReason.invalidBidResponse, lossURL: String = "",
            impressionID: String = "", seat: String = "", adID: String = "", price: Double = 0
        ) {
            self.bidID = bidID
            self.reason = reason
            self.lossReason = lossReason
            self.lossURL = lossURL
            self.impressionID = impressionID
            self.seat = seat
            self.adID = adID
            self.price = price
        }

        init(_ bid: Bid, reason: String, lossReason: Int) {
            self.init(
                bidID: bid.bidID, reason: reason, lossReason: lossReason, lossURL: bid.lossURL,
                impressionID: bid.impressionID, seat: bid.seat, adID: bid.adID, price: bid.price)
        }
    }

    /// Why one bid is dropped: the message logged and its loss reason code.
    struct Rejection: Error {
        var message: String
        var code: Int
        init(_ message: String, _ code: Int) {
            self.message = message
            self.code = code
        }
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
    ///   - media: what the impressions asked for; a bid of another medium is dropped.
    ///   - floor: the impressions' floor; nil (or a price of 0) drops no bid for its price.
    /// - Throws: ``ParseError`` when the body is not JSON or not a BidResponse object.
    public static func parse(
        _ body: [UInt8], layout: NativeAssetLayout, impressionIDs: Set<String>? = nil,
        media: [OpenRTBMedia] = [.native], floor: Floor? = nil
    ) throws(ParseError) -> Outcome {
        try parse(
            document: try document(of: body), layout: layout, impressionIDs: impressionIDs, media: media, floor: floor)
    }

    /// The body read as JSON, once, for ``parse(document:layout:impressionIDs:media:)`` (which
    /// can then read it for several batches): nil for an empty body or one of whitespace only.
    /// - Throws: ``ParseError`` when the body is not JSON.
    public static func document(of body: [UInt8]) throws(ParseError) -> JSONValue? {
        guard body.contains(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) else { return nil }
        do {
            return try JSONValue.parse(bytes: body)
        } catch {
            throw ParseError(message: "malformed JSON at byte \(error.offset): \(error.message)")
        }
    }

    /// ``parse(_:layout:impressionIDs:media:floor:)`` of a body already read by ``document(of:)``.
    /// - Throws: ``ParseError`` when the document is not a BidResponse object.
    public static func parse(
        document: JSONValue?, layout: NativeAssetLayout, impressionIDs: Set<String>? = nil,
        media: [OpenRTBMedia] = [.native], floor: Floor? = nil
    ) throws(ParseError) -> Outcome {
        guard let document else { return Outcome() }
        guard document.members != nil else { throw ParseError(message: "not a JSON object but \(document.kind)") }
        var outcome = Outcome()
        outcome.responseID = document["id"]?.string ?? ""
        outcome.bidResponseID = document["bidid"]?.string ?? ""
        outcome.currency = document["cur"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "USD"
        outcome.noBidReason = document["nbr"]?.integer
        guard let seatbids = document["seatbid"], !seatbids.isNull else { return outcome }
        guard let seats = seatbids.array else { throw ParseError(message: "seatbid is \(seatbids.kind), not an array") }
        // The floor applies when the response is in its currency (ISO 4217 codes, any case).
        let floorPrice = floor.flatMap {
            $0.price > 0 && $0.currency.uppercased() == outcome.currency.uppercased() ? $0.price : nil
        }
        var best: [String: Int] = [:]
        for seatbid in seats {
            let seat = seatbid["seat"]?.string ?? ""
            for item in seatbid["bid"]?.array ?? [] {
                let bidID = item["id"]?.string ?? ""
                switch bid(
                    item, seat: seat, layout: layout, impressionIDs: impressionIDs, media: media, floor: floorPrice)
                {
                case .success(let bid):
                    if let index = best[bid.impressionID] {
                        let other = outcome.bids[index]
                        let (keep, drop) = bid.price > other.price ? (bid, other) : (other, bid)
                        outcome.bids[index] = keep
                        outcome.dropped.append(
                            DroppedBid(
                                drop, reason: "outbid for the same impression",
                                lossReason: LossReason.lostToHigherBid))
                    } else {
                        best[bid.impressionID] = outcome.bids.count
                        outcome.bids.append(bid)
                    }
                case .failure(let rejection):
                    // What the bid said, for its loss notice's macros (when it is an object at all).
                    let price = item["price"]?.number ?? 0
                    outcome.dropped.append(
                        DroppedBid(
                            bidID: bidID, reason: rejection.message, lossReason: rejection.code,
                            lossURL: item["lurl"]?.string ?? "", impressionID: item["impid"]?.string ?? "",
                            seat: seat, adID: item["adid"]?.string ?? "",
                            price: price.isFinite && price >= 0 ? price : 0))
                }
            }
        }
        return outcome
    }

    private static func bid(
        _ item: JSONValue, seat: String, layout: NativeAssetLayout, impressionIDs: Set<String>?,
        media: [OpenRTBMedia], floor: Double?
    ) -> Result<Bid, Rejection> {
        let invalid = LossReason.invalidBidResponse
        guard item.members != nil else { return .failure(Rejection("bid is not an object", invalid)) }
        guard let impressionID = item["impid"]?.string, !impressionID.isEmpty else {
            return .failure(Rejection("bid has no impid", invalid))
        }
        if let impressionIDs, !impressionIDs.contains(impressionID) {
            return .failure(Rejection("bid for unknown impression \"\(impressionID)\"", invalid))
        }
        guard let price = item["price"]?.number, price >= 0, price.isFinite else {
            return .failure(Rejection("bid has no valid price", LossReason.missingBidPrice))
        }
        if let floor, price < floor {
            return .failure(Rejection("bid price \(price) is below the floor \(floor)", LossReason.belowFloor))
        }
        guard let markup = item["adm"], !markup.isNull else {
            return .failure(Rejection("bid has no adm", LossReason.missingMarkup))
        }
        let medium: OpenRTBMedia
        switch Self.medium(of: item, markup: markup, asked: media) {
        case .success(let value): medium = value
        case .failure(let error): return .failure(error)
        }
        let creative: AdCreative
        switch medium {
        case .native:
            switch NativeMarkup.content(of: markup, layout: layout) {
            case .success(let value): creative = .native(value)
            case .failure(let error): return .failure(Rejection(error.message, invalid))
            }
        case .banner, .video:
            guard let text = markup.string else {
                return .failure(Rejection("\(medium) adm is \(markup.kind), not a string of markup", invalid))
            }
            guard text.contains(where: { !$0.isWhitespace }) else {
                return .failure(Rejection("\(medium) adm is empty", LossReason.missingMarkup))
            }
            if medium == .video && !text.contains("<VAST") {
                return .failure(
                    Rejection(
                        "video adm is not a VAST document (no <VAST element)", LossReason.incorrectCreativeFormat))
            }
            let width = item["w"]?.integer.flatMap { (1...100_000).contains($0) ? $0 : nil } ?? 0
            let height = item["h"]?.integer.flatMap { (1...100_000).contains($0) ? $0 : nil } ?? 0
            let orientation: FullScreenCreative.Orientation =
                width == 0 || height == 0 || width == height ? .any : width < height ? .portrait : .landscape
            creative = .fullScreen(
                FullScreenCreative(
                    media: medium == .video ? .vastXML(text) : .markup(text), orientation: orientation, width: width,
                    height: height))
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
                billingURL: item["burl"]?.string ?? "", lossURL: item["lurl"]?.string ?? "", creative: creative,
                media: medium))
    }

    /// The bid's medium: its `mtype` when given (dropped when not asked for), else the one
    /// medium asked for, else read from the markup.
    private static func medium(of item: JSONValue, markup: JSONValue, asked: [OpenRTBMedia]) -> Result<
        OpenRTBMedia, Rejection
    > {
        let wrongFormat = LossReason.incorrectCreativeFormat
        if let mtype = item["mtype"], !mtype.isNull {
            guard let code = mtype.integer, let medium = OpenRTBMedia(markupType: code) else {
                let shown: String =
                    switch mtype {
                    case .number(_, let text): String(text.prefix(20))
                    case .string(let text): "\"\(text.prefix(20))\""
                    default: mtype.kind
                    }
                return .failure(
                    Rejection("bid has mtype \(shown), not 1 (banner), 2 (video) or 4 (native)", wrongFormat))
            }
            guard asked.contains(medium) else {
                return .failure(
                    Rejection(
                        "bid has mtype \(code) (\(medium)), not asked for (\(asked.map(\.description).joined(separator: ", ")))",
                        wrongFormat))
            }
            return .success(medium)
        }
        if asked.count == 1 { return .success(asked[0]) }
        let guessed: OpenRTBMedia
        if markup.members != nil {
            guessed = .native
        } else if let text = markup.string {
            let start = text.first(where: { !$0.isWhitespace })
            guessed = start == "{" ? .native : text.contains("<VAST") ? .video : .banner
        } else {
            return .failure(
                Rejection("adm is \(markup.kind), neither markup nor a native object", LossReason.invalidBidResponse))
        }
        guard asked.contains(guessed) else {
            return .failure(
                Rejection(
                    "bid without mtype reads as \(guessed), not asked for (\(asked.map(\.description).joined(separator: ", ")))",
                    wrongFormat))
        }
        return .success(guessed)
    }
}
