import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// The hand encoders of the hot answers must write exactly what protobuf-c packs.
@Suite struct BorrowResponseEncodingTests {
    /// Ads covering every field's edge: empty and NUL-containing strings, absent and empty
    /// images, ratings 0 / -0.0 / NaN / negative, empty tracker strings, negative and huge
    /// times, clamped show counts and sizes.
    static let ads: [Ad] = {
        var ads = [Fixtures.ad(), Fixtures.ad(full: false), Fixtures.ad(id: "", text: "")]
        for text in Fixtures.strings { ads.append(Fixtures.ad(id: text, text: text)) }
        var edge = Fixtures.ad(id: "a\u{0}b", text: "\u{0}hidden")
        edge.native.icon = AdImage(url: "", width: 0, height: 0)
        edge.native.image = AdImage(url: "x\u{0}y", width: -5, height: Int.max)
        edge.native.impressionTrackers = ["", "a", "\u{0}", ""]
        edge.native.clickTrackers = [""]
        edge.native.price = ""
        edge.native.store = "\u{0}"
        edge.native.adChoicesURL = ""
        edge.loadedAt = AdInstant(unixMilliseconds: -1)
        edge.expiresAt = AdInstant(unixMilliseconds: .max)
        edge.showCount = Int.max
        ads.append(edge)
        for rating in [0.0, -0.0, .nan, -1.5, .infinity, 5] as [Double] {
            var ad = Fixtures.ad()
            ad.native.starRating = rating
            ads.append(ad)
        }
        var negative = Fixtures.ad()
        negative.showCount = -3
        negative.loadedAt = AdInstant(unixMilliseconds: 0)
        negative.expiresAt = AdInstant(unixMilliseconds: .min)
        ads.append(negative)
        var big = Fixtures.ad()
        big.native.body = String(repeating: "é", count: 20_000)
        ads.append(big)
        ads.append(fullScreen)
        return ads
    }()

    static var messages: [BorrowResponseMessage] {
        var messages: [BorrowResponseMessage] = [
            BorrowResponseMessage(outcome: .noAdYet), BorrowResponseMessage(outcome: .unspecified),
        ]
        for (i, ad) in ads.enumerated() {
            let slot: String? = [nil, "", "feed-42/position-7", "s\u{0}t"][i % 4]
            let id: UInt64 = [0, 1, 127, 128, .max][i % 5]
            let lease = Lease(id: id, slot: slot, expiresAt: AdInstant(unixMilliseconds: Int64(i) * 1_000_003), ad: ad)
            messages.append(BorrowResponseMessage(outcome: i % 3 == 0 ? .reused : .leased, lease: lease))
            messages.append(BorrowResponseMessage(outcome: .unspecified, lease: lease))
        }
        return messages
    }

    /// An ad with a full-screen creative (an interstitial).
    static let fullScreen: Ad = {
        var ad = Fixtures.ad(id: "fs-1")
        ad.creative = .fullScreen(
            FullScreenCreative(
                media: .videoURL("https://cdn.example/v.mp4"), orientation: .landscape, width: 1920, height: 1080,
                reward: FullScreenCreative.Reward(type: "coins", amount: 10)))
        return ad
    }()

    /// A full-screen ad travels in the `creative` oneof (`full_screen`, field 60) with its
    /// format and no native field; encoded by hand and by protobuf-c alike, decoded whole.
    @Test(arguments: [AdFormat.interstitial, .rewarded, .appOpen])
    func aFullScreenAdGoesOnTheWireInTheCreativeOneof(format: AdFormat) throws {
        var ad = Self.fullScreen
        ad.format = format
        let lease = Fixtures.lease(ad: ad)
        let message = BorrowResponseMessage(outcome: .leased, lease: lease)
        #expect(message.encoded() == message.encodedWithProtobufC())
        let decoded = try BorrowResponseMessage(decoding: message.encoded())
        #expect(decoded.lease?.ad == ad)
        var cache: [UInt8] = []
        ResponseFrame.append(callID: 3, borrow: message, cache: EncodedAdCache(), to: &cache)
        var generic: [UInt8] = []
        ResponseFrame(callID: 3, message: message.encodedWithProtobufC(), end: true).append(to: &generic)
        #expect(cache == generic)
    }

    /// Every media, orientation and reward shape, including empty markup (a oneof member is
    /// written even when empty) and a negative reward amount.
    @Test(arguments: [
        FullScreenCreative(media: .markup("")),
        FullScreenCreative(media: .markup("<html>ad</html>"), orientation: .portrait, width: 1080, height: 1920),
        FullScreenCreative(
            media: .videoURL("https://v/1.mp4"), reward: FullScreenCreative.Reward(type: "", amount: -5)),
        FullScreenCreative(
            media: .videoURL(""), orientation: .landscape, reward: FullScreenCreative.Reward(type: "gems", amount: 0)),
        FullScreenCreative(media: .vastXML("")),
        FullScreenCreative(
            media: .vastXML(#"<?xml version="1.0"?><VAST version="4.0"><Ad id="é"/></VAST>"#), orientation: .portrait,
            width: 1080, height: 1920, reward: FullScreenCreative.Reward(type: "coins", amount: 10)),
    ])
    func fullScreenCreativesRoundTrip(creative: FullScreenCreative) throws {
        var ad = Self.fullScreen
        ad.creative = .fullScreen(creative)
        ad.format = .rewarded
        let message = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))
        #expect(message.encoded() == message.encodedWithProtobufC())
        #expect(try BorrowResponseMessage(decoding: message.encoded()).lease?.ad == ad)
    }

    /// Native ads leave the format unset: their bytes are those of version 1.
    @Test func nativeAdsCarryNoFormatField() throws {
        let native = Fixtures.ad(id: "n-1")
        #expect(native.format == .native)
        let bytes = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: native)).encoded()
        var formatted = native
        formatted.format = .interstitial  // a format field (2 bytes) where native has none
        let withFormat = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: formatted)).encoded()
        #expect(withFormat.count == bytes.count + 2)
        #expect(try BorrowResponseMessage(decoding: bytes).lease?.ad.format == .native)
    }

    /// A source's context (price, notice URLs) stays in the daemon: the bytes are those of the
    /// same ad without it, and a decoded ad has none.
    @Test func theSourceContextNeverGoesOnTheWire() throws {
        final class Bid: AdSourceContext {
            let price = "1.23"
            let lossURL = "https://exchange.example/loss?auction=42"
        }
        var ad = Fixtures.ad()
        ad.sourceContext = Bid()
        let with = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))
        let without = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease())
        #expect(with.encoded() == without.encoded())
        #expect(with.encodedWithProtobufC() == without.encoded())
        var cached: [UInt8] = []
        ResponseFrame.append(callID: 9, borrow: with, cache: EncodedAdCache(), to: &cached)
        var plain: [UInt8] = []
        ResponseFrame.append(callID: 9, message: without, end: true, to: &plain)
        #expect(cached == plain)
        let decoded = try BorrowResponseMessage(decoding: with.encoded())
        #expect(decoded.lease?.ad.sourceContext == nil)
        #expect(decoded.lease?.ad == Fixtures.ad())
        #expect(decoded.lease?.ad != ad)  // contexts compare by identity
    }

    @Test func borrowResponseMatchesProtobufC() {
        for message in Self.messages {
            let hand = message.encoded()
            #expect(hand == message.encodedWithProtobufC(), "\(message)")
            #expect(message.encodedSize == hand.count)
        }
    }

    @Test(arguments: [nil, .backInPool, .consumed, .expired, .removed] as [ReturnOutcome?])
    func returnResponseMatchesProtobufC(outcome: ReturnOutcome?) {
        let message = ReturnResponseMessage(outcome: outcome)
        #expect(message.encoded() == message.encodedWithProtobufC())
        #expect(message.encodedSize == message.encoded().count)
    }

    /// The frame written with a known message size equals the frame of the encoded bytes.
    @Test(arguments: [0, 1, 127, 128, UInt64.max] as [UInt64])
    func framesWithKnownSizeMatchTheGenericPath(callID: UInt64) throws {
        for message in Self.messages.prefix(12) {
            for end in [true, false] {
                var fast: [UInt8] = [0xEE]
                ResponseFrame.append(callID: callID, message: message, end: end, to: &fast)
                var expected: [UInt8] = [0xEE]
                ResponseFrame(callID: callID, message: message.encodedWithProtobufC(), end: end).append(to: &expected)
                #expect(fast == expected)
            }
        }
    }
}
