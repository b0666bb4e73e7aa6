import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// The hand encoders of the hot answers must write exactly what protobuf-c packs.
@Suite struct BorrowResponseEncodingTests {
    /// Ads covering every field's edge: empty and NUL-containing strings, absent and empty
    /// images, ratings 0 / -0.0 / NaN / negative, empty tracker strings, negative and huge
    /// times, clamped show counts and sizes.
    static let ads: [NativeAd] = {
        var ads = [Fixtures.ad(), Fixtures.ad(full: false), Fixtures.ad(id: "", text: "")]
        for text in Fixtures.strings { ads.append(Fixtures.ad(id: text, text: text)) }
        var edge = Fixtures.ad(id: "a\u{0}b", text: "\u{0}hidden")
        edge.content.icon = AdImage(url: "", width: 0, height: 0)
        edge.content.image = AdImage(url: "x\u{0}y", width: -5, height: Int.max)
        edge.content.impressionTrackers = ["", "a", "\u{0}", ""]
        edge.content.clickTrackers = [""]
        edge.content.price = ""
        edge.content.store = "\u{0}"
        edge.content.adChoicesURL = ""
        edge.loadedAt = AdInstant(unixMilliseconds: -1)
        edge.expiresAt = AdInstant(unixMilliseconds: .max)
        edge.showCount = Int.max
        ads.append(edge)
        for rating in [0.0, -0.0, .nan, -1.5, .infinity, 5] as [Double] {
            var ad = Fixtures.ad()
            ad.content.starRating = rating
            ads.append(ad)
        }
        var negative = Fixtures.ad()
        negative.showCount = -3
        negative.loadedAt = AdInstant(unixMilliseconds: 0)
        negative.expiresAt = AdInstant(unixMilliseconds: .min)
        ads.append(negative)
        var big = Fixtures.ad()
        big.content.body = String(repeating: "é", count: 20_000)
        ads.append(big)
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
