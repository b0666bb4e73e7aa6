import AdLoaderCore
import AdLoaderWire
import Testing

/// Round trips of every request and response message (PrefetchMessages.swift,
/// BorrowMessages.swift, ReturnMessages.swift, StatsMessages.swift, WatchMessages.swift,
/// Ad+ProtobufC.swift).
@Suite struct MessagesTests {
    @Test(arguments: Fixtures.strings)
    func requestsWithAnyStrings(text: String) throws {
        #expect(try roundTrips(PrefetchRequestMessage(adUnitID: text, loader: text)))
        #expect(try roundTrips(BorrowRequestMessage(adUnitID: text, loader: text, slot: text, waitMilliseconds: 5)))
        #expect(try roundTrips(StatsRequestMessage(loader: text, adUnitID: text)))
        #expect(try roundTrips(WatchRequestMessage(loader: text, adUnitID: text, kinds: [.leased])))
    }

    @Test(arguments: Fixtures.strings)
    func adsWithAnyStrings(text: String) throws {
        for full in [true, false] {
            let ad = Fixtures.ad(id: text.isEmpty ? "x" : text, text: text, full: full)
            #expect(
                try roundTrips(
                    BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(slot: nonEmpty(text), ad: ad))))
        }
    }

    @Test func maximumSizes() throws {
        let ad = Fixtures.ad(text: Fixtures.huge)
        let message = BorrowResponseMessage(
            outcome: .reused, lease: Fixtures.lease(id: .max, slot: Fixtures.huge, ad: ad))
        #expect(message.encoded().count > 4 << 20)
        #expect(try roundTrips(message))
        #expect(try roundTrips(BorrowRequestMessage(adUnitID: Fixtures.huge, waitMilliseconds: .max)))
        #expect(try roundTrips(ReturnRequestMessage(leaseID: .max, shown: true)))
        let many = (0..<10_000).map { PoolStats(loader: "l\($0)", adUnitID: "u\($0)") }
        #expect(try roundTrips(StatsResponseMessage(pools: many)))
    }

    @Test func statsWithSourceCountersRoundTrip() throws {
        var source = DemandSourceStats(name: "openrtb")
        source.requests = 7
        source.noFills = 1
        source.bids = 30
        source.bidsDropped = 2
        source.failures = 3
        source.noticesSent = .max
        source.noticesFailed = 4
        source.noticesDropped = 5
        let message = StatsResponseMessage(
            pools: [PoolStats(loader: "l", adUnitID: "u")], sources: [source, DemandSourceStats()])
        #expect(try roundTrips(message))
        // Additive: an answer without sources decodes as before, and one with them as pools only for old readers.
        #expect(try roundTrips(StatsResponseMessage(pools: [])))
    }

    @Test func statsCarriesTheInstanceNameAsField4() throws {
        let message = StatsResponseMessage(pools: [PoolStats(loader: "l", adUnitID: "u")], instance: "127.0.0.1:7421")
        #expect(try roundTrips(message))
        let bytes = StatsResponseMessage(pools: [], instance: "a").encoded()
        #expect(bytes == [0x22, 0x01, UInt8(ascii: "a")])  // field 4, length-delimited
        #expect(StatsResponseMessage(pools: []).encoded().isEmpty)  // empty: not sent
        #expect(try StatsResponseMessage(decoding: bytes).instance == "a")
    }

    @Test func extremeNumbersClampOrSurvive() throws {
        var ad = Fixtures.ad()
        ad.loadedAt = AdInstant(unixMilliseconds: .min)
        ad.expiresAt = AdInstant(unixMilliseconds: .max)
        ad.showCount = Int(UInt32.max)
        #expect(try roundTrips(BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))))
        let clamped = PrefetchResponseMessage(result: PrefetchResult(available: Int.max, inFlight: -1, requested: 3))
        let decoded = try PrefetchResponseMessage(decoding: clamped.encoded())
        #expect(decoded.result == PrefetchResult(available: Int(UInt32.max), inFlight: 0, requested: 3))
    }

    @Test(arguments: [
        PrefetchResult(available: 0, inFlight: 0, requested: 0),
        PrefetchResult(available: 3, inFlight: 2, requested: 5),
    ])
    func prefetchResponse(result: PrefetchResult) throws {
        #expect(try roundTrips(PrefetchResponseMessage(result: result)))
    }

    @Test(arguments: [
        BorrowResponseMessage(outcome: .noAdYet), BorrowResponseMessage(outcome: .unspecified),
        BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease()),
        BorrowResponseMessage(outcome: .reused, lease: Fixtures.lease(id: 1, slot: nil)),
    ])
    func borrowResponse(message: BorrowResponseMessage) throws {
        #expect(try roundTrips(message))
    }

    @Test func borrowResultMapping() {
        let lease = Fixtures.lease()
        #expect(BorrowResponseMessage(.leased(lease, reused: true))?.outcome == .reused)
        #expect(BorrowResponseMessage(.leased(lease, reused: false))?.result == .leased(lease, reused: false))
        #expect(BorrowResponseMessage(.noAdYet)?.result == .noAdYet)
        #expect(BorrowResponseMessage(.unavailable) == nil)
        #expect(BorrowResponseMessage(outcome: .leased).result == nil)
    }

    @Test func leaseWithoutAdIsBadMessage() {
        // BorrowResponse { outcome: LEASED, lease: { lease_id: 1 } }
        let bytes: [UInt8] = [0x08, 0x01, 0x12, 0x02, 0x08, 0x01]
        #expect(throws: FrameError(code: .badMessage, message: "lease.ad: missing")) {
            try BorrowResponseMessage(decoding: bytes)
        }
    }

    @Test func unknownEnumValuesReadAsUnspecified() throws {
        #expect(try BorrowResponseMessage(decoding: [0x08, 0x63]).outcome == .unspecified)
        #expect(try ReturnResponseMessage(decoding: [0x08, 0x63]).outcome == nil)
    }

    @Test(arguments: [nil, .backInPool, .consumed, .expired, .removed] as [ReturnOutcome?])
    func returnResponse(outcome: ReturnOutcome?) throws {
        #expect(try roundTrips(ReturnResponseMessage(outcome: outcome)))
    }

    @Test(arguments: [(UInt64(0), false), (1, true), (.max, false)])
    func returnRequest(leaseID: UInt64, shown: Bool) throws {
        #expect(try roundTrips(ReturnRequestMessage(leaseID: leaseID, shown: shown)))
    }

    @Test func statsResponse() throws {
        var pool = PoolStats(loader: "default", adUnitID: "feed")
        pool.available = 3
        pool.leased = 1
        pool.inFlight = 2
        pool.parkedBorrows = 4
        pool.loaded = .max
        pool.expired = 5
        pool.consumed = 6
        pool.removed = 7
        pool.upstreamRequests = 8
        pool.upstreamFailures = 9
        pool.borrowHits = 10
        pool.borrowMisses = 11
        pool.leasesReclaimed = 12
        #expect(try roundTrips(StatsResponseMessage(pools: [pool, PoolStats(loader: "", adUnitID: "")])))
        #expect(try roundTrips(StatsResponseMessage(pools: [])))
    }

    @Test func watchRequestKinds() throws {
        #expect(try roundTrips(WatchRequestMessage(kinds: AdEvent.Kind.allWireKinds)))
        #expect(try roundTrips(WatchRequestMessage()))
        // kinds = [1, 0] (packed): 0 is UNSPECIFIED, refused naming the field.
        #expect(throws: FrameError(code: .badMessage, message: "kinds: unknown event kind 0")) {
            try WatchRequestMessage(decoding: [0x1A, 0x02, 0x01, 0x00])
        }
        // kinds = 11, unpacked: a kind this version does not know (10 is RESTORED).
        #expect(throws: FrameError(code: .badMessage, message: "kinds: unknown event kind 11")) {
            try WatchRequestMessage(decoding: [0x18, 0x0B])
        }
        #expect(try WatchRequestMessage(decoding: [0x18, 0x0A]).kinds == [.restored])
    }

    @Test(arguments: AdEvent.Kind.allWireKinds)
    func events(kind: AdEvent.Kind) throws {
        var event = AdEvent(
            kind: kind, at: AdInstant(unixMilliseconds: 1_764_430_000_123), loader: "default", adUnitID: "feed")
        if kind == .restored {
            // RESTORED carries where from in `reason`, its leases and expired ads in fields 13, 14.
            event.restoration = AdEvent.Restoration(origin: .suspension)
            #expect(try roundTrips(EventMessage(event: event)))
            event.restoration = AdEvent.Restoration(origin: .journal, leases: 3, expired: 70_000)
        }
        #expect(try roundTrips(EventMessage(event: event)))
        event.adID = "ad-9"
        event.leaseID = 77
        event.slot = "slot 🎰"
        event.shown = true
        event.count = 5
        if kind == .heldBack {
            // HELD_BACK carries the cap that binds in `reason`.
            event.holdBack = .poolCeiling
        } else if kind != .restored {
            event.reason = .consumed
        }
        event.error = UpstreamError(code: .unreachable, message: "connect: refused")
        #expect(try roundTrips(EventMessage(event: event)))
        for code in [UpstreamError.Code.retryable, .final] {
            event.error = UpstreamError(code: code, message: "x: y")
            #expect(try roundTrips(EventMessage(event: event)))
            // A message starting with a combining mark joins the prefix's space into one
            // grapheme; the code is still read from the bytes (an envelope fuzz finding).
            event.error = UpstreamError(code: code, message: "\u{0347}\u{0466}/Z")
            #expect(try roundTrips(EventMessage(event: event)))
        }
        #expect(AdEvent.Kind(wireName: kind.wireName) == kind)
        #expect(
            AdEvent.Kind(
                wireName: kind.wireName.lowercased().map { $0 == "_" ? "-" : $0 }.reduce("") { $0 + String($1) })
                == kind)
    }

    /// The reason strings on the wire are fixed (PROTOCOL.md, adloader.proto): each enum case
    /// keeps its string, and an unknown string decodes as no reason.
    @Test func eventReasonsTravelAsTheirFixedStrings() throws {
        let expected: [AdEvent.Reason: String] = [
            .consumed: "consumed", .disabled: "disabled", .shutdown: "shutdown", .invalidated: "invalidated",
            .reclaimed: "reclaimed", .expired: "expired", .reconfigured: "reconfigured", .enabled: "enabled",
            .added: "added", .removed: "removed", .memoryBudget: "memory_budget",
        ]
        #expect(expected.count == AdEvent.Reason.allCases.count)
        for reason in AdEvent.Reason.allCases {
            #expect(reason.wireName == expected[reason])
            #expect(AdEvent.Reason(wireName: reason.wireName) == reason)
            var event = AdEvent(kind: .removed, at: AdInstant(unixMilliseconds: 9), loader: "default", adUnitID: "feed")
            event.reason = reason
            var bytes: [UInt8] = []
            EventMessage(event: event).encode(into: &bytes)
            // Event.reason is field 11 (length-delimited): its bytes are the string itself.
            let string = Array(expected[reason]!.utf8)
            #expect(bytes.firstRange(of: [0x5A, UInt8(string.count)] + string) != nil)
            #expect(try roundTrips(EventMessage(event: event)))
        }
        #expect(AdEvent.Reason(wireName: "") == nil)
        #expect(AdEvent.Reason(wireName: "someday") == nil)
    }

    /// A RESTORED event whose `reason` names an origin unknown to this version still decodes,
    /// with no origin (an unknown reason reads as no reason, PROTOCOL.md 7.5).
    @Test func aRestoredEventOfAnUnknownOriginDecodesWithoutOne() throws {
        // kind 10, count 4, reason "later", leases 2, expired 1
        let message = try EventMessage(
            decoding: [0x08, 0x0A, 0x48, 0x04, 0x5A, 0x05, 0x6C, 0x61, 0x74, 0x65, 0x72, 0x68, 0x02, 0x70, 0x01])
        #expect(message.event.kind == .restored && message.event.count == 4)
        #expect(message.event.restoration == AdEvent.Restoration(origin: nil, leases: 2, expired: 1))
        #expect(message.event.reason == nil)
    }

    @Test func eventWithoutKindIsBadMessage() {
        #expect(throws: FrameError(code: .badMessage, message: "kind: unknown event kind 0")) {
            try EventMessage(decoding: [])
        }
    }

    @Test func emptyRequestsDecodeToDefaults() throws {
        #expect(try PrefetchRequestMessage(decoding: []) == PrefetchRequestMessage(adUnitID: ""))
        #expect(try BorrowRequestMessage(decoding: []) == BorrowRequestMessage(adUnitID: ""))
        #expect(try StatsRequestMessage(decoding: []) == StatsRequestMessage())
        #expect(try WatchRequestMessage(decoding: []) == WatchRequestMessage())
        #expect(try ReturnRequestMessage(decoding: []) == ReturnRequestMessage(leaseID: 0, shown: false))
    }

    @Test func wrongWireTypeIsBadMessage() {
        // field 1 (ad_unit_id, a string) sent as a varint
        do {
            _ = try PrefetchRequestMessage(decoding: [0x08, 0x01])
            Issue.record("decoded a varint as a string")
        } catch {
            #expect(error.code == .badMessage)
        }
    }

    /// Random bytes either fail to decode with a FrameError or decode to a value that survives
    /// its own round trip (never a crash, never a value the encoder cannot reproduce).
    @Test(arguments: 0..<300)
    func garbageThrowsOrDecodesToAStableValue(seed: Int) throws {
        var rng = SeededGenerator(seed: UInt64(seed) &+ 5000)
        let bytes = [UInt8].random(count: Int.random(in: 0...300, using: &rng), using: &rng)
        try expectStableOrRejected(PrefetchRequestMessage.self, bytes)
        try expectStableOrRejected(PrefetchResponseMessage.self, bytes)
        try expectStableOrRejected(BorrowRequestMessage.self, bytes)
        try expectStableOrRejected(BorrowResponseMessage.self, bytes)
        try expectStableOrRejected(ReturnRequestMessage.self, bytes)
        try expectStableOrRejected(ReturnResponseMessage.self, bytes)
        try expectStableOrRejected(StatsRequestMessage.self, bytes)
        try expectStableOrRejected(StatsResponseMessage.self, bytes)
        try expectStableOrRejected(WatchRequestMessage.self, bytes)
        try expectStableOrRejected(EventMessage.self, bytes)
    }

    private func expectStableOrRejected<M: WireMessage>(_ type: M.Type, _ bytes: [UInt8]) throws {
        let decoded: M
        do {
            decoded = try M(decoding: bytes)
        } catch {
            return  // typed: a FrameError, which is the clear rejection we want
        }
        #expect(try M(decoding: decoded.encoded()) == decoded, "\(M.self) from \(bytes)")
    }

    private func nonEmpty(_ s: String) -> String? { s.isEmpty ? nil : s }
}

extension MessagesTests {
    /// The byte-level example of PROTOCOL.md 7.4 (SourceStats).
    @Test func sourceStatsExampleOfTheSpec() throws {
        var source = DemandSourceStats(name: "rtb")
        source.requests = 2
        source.noticesSent = 1
        #expect(
            StatsResponseMessage(pools: [], sources: [source]).encoded() == [
                0x12, 0x09, 0x0a, 0x03, 0x72, 0x74, 0x62, 0x10, 0x02, 0x38, 0x01,
            ])
    }
}
