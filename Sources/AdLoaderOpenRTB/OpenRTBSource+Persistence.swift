import AdLoaderCore
import AdLoaderJSON
import AdLoaderLogging

extension OpenRTBSource {
    /// A ``BidContext`` as JSON (`v` 1): the notice URLs and macros an ad needs to fire its
    /// billing or loss notice after a restart. The price is kept as its bit pattern: exact.
    public func encodeContext(_ context: any AdSourceContext) -> [UInt8]? {
        guard let bid = context as? BidContext else { return nil }
        let m = bid.macros
        var json = JSONWriter(capacity: 256 + bid.winURL.utf8.count + bid.lossURL.utf8.count)
        json.beginObject()
        json.field("v", 1)
        json.field("auction", m.auctionID)
        json.field("bid", m.bidID)
        json.field("imp", m.impressionID)
        json.field("seat", m.seatID)
        json.field("ad", m.adID)
        json.field("price", String(m.price.bitPattern, radix: 16))
        json.field("cur", m.currency)
        json.field("win", bid.winURL)
        json.field("loss", bid.lossURL)
        json.field("crid", bid.creativeID)
        json.key("adomain")
        json.beginArray()
        for domain in bid.advertiserDomains { json.value(domain) }
        json.endArray()
        json.endObject()
        return Array(json.text.utf8)
    }

    public func decodeContext(_ bytes: [UInt8]) -> (any AdSourceContext)? {
        guard let value = try? JSONValue.parse(bytes: bytes), value["v"]?.integer == 1,
            let auction = value["auction"]?.string, let bid = value["bid"]?.string, let imp = value["imp"]?.string,
            let seat = value["seat"]?.string, let ad = value["ad"]?.string,
            let priceBits = value["price"]?.string.flatMap({ UInt64($0, radix: 16) }), let currency = value["cur"]?.string,
            let win = value["win"]?.string, let loss = value["loss"]?.string, let crid = value["crid"]?.string,
            let domains = value["adomain"]?.array?.compactMap(\.string)
        else { return nil }
        let macros = NoticeMacros(
            auctionID: auction, bidID: bid, impressionID: imp, seatID: seat, adID: ad, price: Double(bitPattern: priceBits),
            currency: currency)
        return BidContext(macros: macros, winURL: win, lossURL: loss, creativeID: crid, advertiserDomains: domains)
    }
}
