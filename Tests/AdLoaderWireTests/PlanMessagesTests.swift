import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// PlanRequest and PlanResponse: PROTOCOL.md 7.11's example bytes, round trips, garbage.
@Suite struct PlanMessagesTests {
    func request(_ bytes: [UInt8]) throws -> PlanRequestMessage {
        var copy = bytes
        return try copy.withUnsafeMutableBytes { try PlanRequestMessage(decoding: UnsafeRawBufferPointer($0)) }
    }

    func response(_ bytes: [UInt8]) throws -> PlanResponseMessage {
        var copy = bytes
        return try copy.withUnsafeMutableBytes { try PlanResponseMessage(decoding: UnsafeRawBufferPointer($0)) }
    }

    static let requestBytes: [UInt8] = [
        0x0a, 0x02, 0x75, 0x31, 0x12, 0x04, 0x68, 0x6f, 0x6d, 0x65, 0x28, 0x07, 0x30, 0x03,
    ]
    static let responseBytes: [UInt8] = [
        0x0a, 0x04, 0x08, 0x01, 0x10, 0x03, 0x0a, 0x04, 0x08, 0x09, 0x10, 0x02, 0x10, 0x01,
    ]

    @Test func theExamplesOfPROTOCOLmdAreWhatTheEncodersWrite() throws {
        let request = PlanRequestMessage(feedID: "u1", adUnitID: "home", firstVisible: 0, lastVisible: 7, ahead: 3)
        #expect(request.encoded() == Self.requestBytes)
        let decoded = try self.request(Self.requestBytes)
        #expect(decoded == request)
        let response = PlanResponseMessage(
            plan: FeedPlan(
                positions: [PlannedPosition(position: 1, state: .empty), PlannedPosition(position: 9, state: .coming)],
                created: true))
        #expect(response.encoded() == Self.responseBytes)
        let back = try self.response(Self.responseBytes)
        #expect(back.plan == response.plan)
    }

    @Test func leasesAndPlacementRoundTrip() throws {
        let ad = Ad(
            id: "a1", adUnitID: "home", loader: "default", creative: .native(NativeAdContent(headline: "h")),
            loadedAt: AdInstant(unixMilliseconds: 1), expiresAt: AdInstant(unixMilliseconds: 2))
        let plan = FeedPlan(
            positions: [
                PlannedPosition(
                    position: 4,
                    state: .ad(Lease(id: 7, slot: "u1#4", expiresAt: AdInstant(unixMilliseconds: 2), ad: ad)))
            ],
            created: false)
        let bytes = PlanResponseMessage(plan: plan).encoded()
        let back = try response(bytes)
        guard case .ad(let lease) = back.plan.positions.first?.state else {
            throw FrameError(code: .badMessage, message: "no ad")
        }
        #expect(lease.id == 7 && lease.slot == "u1#4" && lease.ad.id == "a1")
        let request = PlanRequestMessage(
            feedID: "f", adUnitID: "u", firstVisible: 2, lastVisible: 9, ahead: 1,
            placement: .init(fixedPositions: [0, 3], repeatingInterval: 4, maximumAds: 10))
        let decoded = try self.request(request.encoded())
        #expect(decoded == request)
    }

    /// PlanRequest's `privacy` (field 8): the signals of PROTOCOL.md 7.10, as on Borrow.
    @Test(arguments: [nil, PrivacySignalsMessage(), PrivacySignalsMessageTests.full])
    func privacySignalsRoundTrip(privacy: PrivacySignalsMessage?) throws {
        let request = PlanRequestMessage(
            feedID: "f", adUnitID: "u", firstVisible: 0, lastVisible: 7, ahead: 3, privacy: privacy)
        let bytes = request.encoded()
        #expect(try self.request(bytes) == request)
        // Field 8, length-delimited, follows the window; absent when not set.
        #expect(bytes.contains(0x42) == (privacy != nil))
        #expect(
            PlanRequestMessage(
                feedID: "f", adUnitID: "u", firstVisible: 0, lastVisible: 0, privacy: .init(usPrivacy: "1\0")
            )
            .stringFieldWithNUL == "privacy.us_privacy")
    }

    @Test(arguments: [
        [0x0a, 0x04, 0x08, 0x01, 0x10, 0x01] as [UInt8],  // AD without its lease
        [0x0a, 0x04, 0x08, 0x01, 0x10, 0x07],  // an unknown state
        [0x0a, 0x09, 0x08],  // truncated
        [0xff, 0xff, 0xff],
    ])
    func garbageIsABadMessage(bytes: [UInt8]) {
        #expect(throws: FrameError.self) { _ = try response(bytes) }
    }
}
