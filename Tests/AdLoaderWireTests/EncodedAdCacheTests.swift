import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// The Borrow and Return answers the server writes through its fast paths must be the bytes
/// of the plain encoding, whatever the cache holds.
@Suite struct EncodedAdCacheTests {
    /// The frame of the generic path, from protobuf-c's packing of the message.
    static func expectedFrame(callID: UInt64, _ message: BorrowResponseMessage) -> [UInt8] {
        var bytes: [UInt8] = [0xEE]
        ResponseFrame(callID: callID, message: message.encodedWithProtobufC(), end: true).append(to: &bytes)
        return bytes
    }

    static func cachedFrame(callID: UInt64, _ message: BorrowResponseMessage, _ cache: EncodedAdCache) -> [UInt8] {
        var bytes: [UInt8] = [0xEE]
        ResponseFrame.append(callID: callID, borrow: message, cache: cache, to: &bytes)
        return bytes
    }

    @Test(arguments: [0, 1, 127, 128, UInt64.max] as [UInt64])
    func borrowFramesMatchTheEncodingOnMissAndHit(callID: UInt64) {
        let cache = EncodedAdCache()
        for pass in 0..<2 {
            for message in BorrowResponseEncodingTests.messages {
                #expect(
                    Self.cachedFrame(callID: callID, message, cache) == Self.expectedFrame(callID: callID, message),
                    "pass \(pass): \(message)")
            }
        }
        // Every message with a lease was a miss the first time, a hit the second (ads with
        // the same id and equal contents count once).
        #expect(cache.hits > 0)
        #expect(cache.hits + cache.misses == 2 * BorrowResponseEncodingTests.messages.filter { $0.lease != nil }.count)
    }

    /// An ad shown since its last lend has the same id but new contents: the cache must not
    /// answer with the old bytes, and the entry is replaced rather than added.
    @Test func changedAdIsEncodedAgainAndReplacesItsEntry() {
        let cache = EncodedAdCache()
        var ad = Fixtures.ad(id: "ad-changes")
        let first = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))
        #expect(Self.cachedFrame(callID: 9, first, cache) == Self.expectedFrame(callID: 9, first))
        ad.showCount += 1
        let second = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))
        #expect(Self.cachedFrame(callID: 9, second, cache) == Self.expectedFrame(callID: 9, second))
        #expect(Self.cachedFrame(callID: 9, second, cache) == Self.expectedFrame(callID: 9, second))
        #expect(cache.count == 1)
        #expect(cache.misses == 2)
        #expect(cache.hits == 1)
    }

    /// Thousands of ids (the table grows and probes past occupied slots), then all of them
    /// again: each is found, with its own bytes.
    @Test func manyAdsAreEachFoundAgain() {
        let cache = EncodedAdCache()
        let ads = (0..<3_000).map { Fixtures.ad(id: "5eed-\($0)", text: "t\($0 % 7)") }
        for pass in 0..<2 {
            for (i, ad) in ads.enumerated() {
                let message = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(id: UInt64(i + 1), ad: ad))
                let cached = Self.cachedFrame(callID: UInt64(i + 1), message, cache)
                if i % 97 == 0 || pass == 1 && i % 13 == 0 {
                    #expect(cached == Self.expectedFrame(callID: UInt64(i + 1), message), "pass \(pass), ad \(i)")
                }
            }
        }
        #expect(cache.count == ads.count)
        #expect(cache.misses == ads.count)
        #expect(cache.hits == ads.count)
    }

    /// Random lends and forgets against a set of the ids that should be held (a table of 64
    /// slots grows as it fills, so probe runs wrap and collide): after every step the count
    /// matches, a held id is a hit with its own bytes, a forgotten one a miss.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func forgettingKeepsEveryOtherEntryReachable(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let cache = EncodedAdCache()
        var held = Set<Int>()
        for step in 0..<4_000 {
            let id = Int(random.next() % 300)
            if random.next() % 3 == 0 {
                cache.forget(id: "ad-\(id)")
                held.remove(id)
            } else {
                let message = BorrowResponseMessage(
                    outcome: .leased, lease: Fixtures.lease(ad: Fixtures.ad(id: "ad-\(id)", text: "t\(id)")))
                let (hits, misses) = (cache.hits, cache.misses)
                let frame = Self.cachedFrame(callID: 1, message, cache)
                if step % 50 == 0 { #expect(frame == Self.expectedFrame(callID: 1, message)) }
                if held.contains(id) {
                    #expect(cache.hits == hits + 1, "step \(step): ad-\(id) was held but missed")
                } else {
                    #expect(cache.misses == misses + 1, "step \(step): ad-\(id) was forgotten but hit")
                }
                held.insert(id)
            }
            #expect(cache.count == held.count)
        }
    }

    /// The point of forgetting: the cache no longer keeps the ad (and its strings) alive.
    @Test func aForgottenAdIsReleased() {
        final class Context: AdSourceContext {}
        let cache = EncodedAdCache()
        weak var context: Context?
        do {
            let strong = Context()
            context = strong
            var ad = Fixtures.ad(id: "retired")
            ad.sourceContext = strong
            _ = Self.cachedFrame(
                callID: 1, BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad)), cache)
        }
        #expect(context != nil, "the cache holds the ad it encoded")
        cache.forget(id: "retired")
        cache.forget(id: "never-lent")
        #expect(context == nil)
        #expect(cache.count == 0)
    }

    @Test func fullCacheStartsOver() {
        let cache = EncodedAdCache(maximumCount: 4)
        for i in 0..<5 {
            let message = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: Fixtures.ad(id: "ad-\(i)")))
            #expect(Self.cachedFrame(callID: 1, message, cache) == Self.expectedFrame(callID: 1, message))
        }
        #expect(cache.count == 1)
        let again = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: Fixtures.ad(id: "ad-0")))
        #expect(Self.cachedFrame(callID: 1, again, cache) == Self.expectedFrame(callID: 1, again))
        #expect(cache.misses == 6)
    }

    /// Two versions of one ad lent in turn: each lend gets the bytes of the version lent.
    @Test func alternatingVersionsOfAnAdAreEachEncodedRight() {
        let a = Fixtures.ad(id: "one-id", text: "A")
        let b = Fixtures.ad(id: "one-id", text: "B")
        let cache = EncodedAdCache()
        for ad in [a, b, a, b] {
            let message = BorrowResponseMessage(outcome: .reused, lease: Fixtures.lease(ad: ad))
            #expect(Self.cachedFrame(callID: 3, message, cache) == Self.expectedFrame(callID: 3, message))
        }
        #expect(cache.count == 1)
    }

    @Test(arguments: [0, 1, 127, 128, UInt64.max] as [UInt64])
    func returnFramesMatchTheGenericPath(callID: UInt64) {
        for outcome in [nil, .backInPool, .consumed, .expired, .removed] as [ReturnOutcome?] {
            let message = ReturnResponseMessage(outcome: outcome)
            var fast: [UInt8] = [0xEE]
            ResponseFrame.append(callID: callID, returned: message, to: &fast)
            var expected: [UInt8] = [0xEE]
            ResponseFrame(callID: callID, message: message.encodedWithProtobufC(), end: true).append(to: &expected)
            #expect(fast == expected, "\(String(describing: outcome))")
        }
    }

    /// Writes of every size around the stack path's limit give the same bytes.
    @Test func appendWrittenOfEverySize() {
        for count in 1...(2 * [UInt8].smallWriteLimit + 3) {
            var bytes: [UInt8] = [1, 2, 3]
            bytes.appendWritten(count: count) { w in
                for i in 0..<count { w.byte(UInt8(truncatingIfNeeded: i &* 31)) }
            }
            #expect(bytes == [1, 2, 3] + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        }
    }
}
