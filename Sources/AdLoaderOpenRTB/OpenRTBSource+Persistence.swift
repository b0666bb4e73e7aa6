public import AdLoaderCore
import AdLoaderJSON
import AdLoaderLogging

extension BidContext {
    /// This bid as JSON (`v` 1): the notice URLs and macros its ad needs to fire its billing or
    /// loss notice after a restart (``OpenRTBSource/restoreContext(from:for:)``). The price is
    /// kept as its bit pattern: exact.
    public var snapshotState: [UInt8]? {
        let m = macros
        var json = JSONWriter(capacity: 256 + winURL.utf8.count + lossURL.utf8.count)
        json.beginObject()
        json.field("v", 1)
        json.field("auction", m.auctionID)
        json.field("bid", m.bidID)
        json.field("imp", m.impressionID)
        json.field("seat", m.seatID)
        json.field("ad", m.adID)
        json.field("price", String(m.price.bitPattern, radix: 16))
        json.field("cur", m.currency)
        json.field("win", winURL)
        json.field("loss", lossURL)
        json.field("crid", creativeID)
        json.key("adomain")
        json.beginArray()
        for domain in advertiserDomains { json.value(domain) }
        json.endArray()
        json.endObject()
        return Array(json.text.utf8)
    }
}

extension OpenRTBSource {
    /// The ``BidContext`` of ``BidContext/snapshotState``; nil for bytes of another form.
    public func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? {
        guard let value = try? JSONValue.parse(bytes: state), value["v"]?.integer == 1,
            let auction = value["auction"]?.string, let bid = value["bid"]?.string, let imp = value["imp"]?.string,
            let seat = value["seat"]?.string, let adID = value["ad"]?.string,
            let priceBits = value["price"]?.string.flatMap({ UInt64($0, radix: 16) }),
            let currency = value["cur"]?.string,
            let win = value["win"]?.string, let loss = value["loss"]?.string, let crid = value["crid"]?.string,
            let domains = value["adomain"]?.array?.compactMap(\.string)
        else { return nil }
        let macros = NoticeMacros(
            auctionID: auction, bidID: bid, impressionID: imp, seatID: seat, adID: adID,
            price: Double(bitPattern: priceBits), currency: currency)
        return BidContext(macros: macros, winURL: win, lossURL: loss, creativeID: crid, advertiserDomains: domains)
    }
}
