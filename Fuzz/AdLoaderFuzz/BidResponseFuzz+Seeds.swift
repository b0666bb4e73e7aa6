extension BidResponseFuzz {
    public static var seeds: [(name: String, bytes: [UInt8])] {
        let markup =
            #"{\"native\":{\"ver\":\"1.2\",\"assets\":[{\"id\":1,\"title\":{\"text\":\"Hotel Katla\"}},{\"id\":3,\"img\":{\"url\":\"https://i.test/m.jpg\",\"w\":800,\"h\":800}},"#
            + #"{\"id\":4,\"data\":{\"value\":\"Vik\"}},{\"id\":7,\"data\":{\"type\":3,\"value\":\"4.5\"}}],\"link\":{\"url\":\"https://c.test/\",\"clicktrackers\":[\"https://ct.test/?p=${AUCTION_PRICE}\"]},"#
            + #"\"imptrackers\":[\"https://it.test/\"],\"eventtrackers\":[{\"event\":1,\"method\":1,\"url\":\"https://et.test/\"}],\"privacy\":\"https://p.test/\"}}"#
        let bid =
            #"{"id":"b1","impid":"1","price":0.86403,"adm":"\#(markup)","nurl":"https://n.test/?p=${AUCTION_PRICE}","#
            + #""burl":"https://b.test/","lurl":"https://l.test/?r=${AUCTION_LOSS}","crid":"c","adomain":["a.test"],"exp":300}"#
        let texts: [(String, String)] = [
            ("full", #"{"id":"r","bidid":"x","cur":"USD","seatbid":[{"seat":"s","bid":[\#(bid)]}]}"#),
            (
                "two-seats",
                #"{"id":"r","seatbid":[{"bid":[\#(bid)]},{"bid":[\#(bid.replacingOccurrences("\"b1\"", "\"b2\""))]}]}"#
            ),
            (
                "object-adm",
                #"{"seatbid":[{"bid":[{"id":"o","impid":"2","price":1,"adm":{"assets":[{"id":1,"title":{"text":"T"}},{"id":3,"img":{"url":"u"}}],"link":{"url":"l"}}}]}]}"#
            ),
            (
                "missing-asset",
                #"{"seatbid":[{"bid":[{"id":"m","impid":"3","price":1,"adm":"{\"assets\":[{\"id\":1,\"title\":{\"text\":\"T\"}}],\"link\":{\"url\":\"l\"}}"}]}]}"#
            ),
            ("empty-object", "{}"),
            ("nbr", #"{"id":"r","nbr":2}"#),
            ("empty-seatbid", #"{"id":"r","seatbid":[]}"#),
            ("empty", ""),
            ("truncated", #"{"id":"r","seatbid":[{"bid":[{"id""#),
            ("html", "<html><body>maintenance</body></html>"),
            ("escapes", #"{"id":"\u00e9\ud83c\udf89\n\"\\","seatbid":null}"#),
            (
                "banner-mtype",
                #"{"id":"r","seatbid":[{"bid":[{"id":"h","impid":"1","price":2.5,"mtype":1,"w":320,"h":480,"adm":"<div><a href=\"https://c.test/\"><img src=\"https://i.test/i.jpg\"></a></div>","burl":"https://b.test/?p=${AUCTION_PRICE}"}]}]}"#
            ),
            (
                "video-vast",
                #"{"id":"r","seatbid":[{"bid":[{"id":"v","impid":"2","price":4,"mtype":2,"exp":600,"adm":"<?xml version=\"1.0\"?><VAST version=\"4.0\"><Ad id=\"1\"><InLine><Creatives><Creative><Linear><Duration>00:00:15</Duration><MediaFiles><MediaFile type=\"video/mp4\" width=\"1080\" height=\"1920\"><![CDATA[https://v.test/a.mp4]]></MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>"}]}]}"#
            ),
            (
                "mtype-mismatch",
                #"{"id":"r","seatbid":[{"bid":[{"id":"a","impid":"1","price":1,"mtype":3,"adm":"<VAST/>"},{"id":"n","impid":"2","price":1,"mtype":4,"adm":"<html/>"},{"id":"x","impid":"3","price":1,"adm":"  "}]}]}"#
            ),
        ]
        return texts.map { ($0.0, Array($0.1.utf8)) }
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        replacing(target, with: replacement)
    }
}
