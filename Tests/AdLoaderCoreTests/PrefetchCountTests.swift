import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// Prefetch under demand sizing: the caller's count of ads it will want soon, filled to the
/// larger of it and the demand target, bounded by maximumRetainedAdvertisements.
struct PrefetchCountTests {
    static func demandSized(_ configuration: inout LoaderConfiguration) {
        configuration.sizing = .demand
        configuration.numberOfAdvertisements = 5
        configuration.maximumRetainedAdvertisements = 40
        configuration.maximumConcurrentRequests = 3
    }

    @Test func aCountAboveTheDemandTargetFillsToTheCount() throws {
        let plain = try Harness(Self.demandSized)
        let target = try plain.loader.prefetch(adUnitID: "unit").requested
        #expect(target > 0 && target < 12)  // a fresh pool's demand target
        let h = try Harness(Self.demandSized)
        let result = try h.loader.prefetch(adUnitID: "unit", count: 12)
        #expect(result.requested == 12 && h.source.requests.map(\.count) == [5, 5, 2])
        h.source.succeedAll()
        #expect(h.stats().available == 12)
        // Filled: asking again for the same sends nothing.
        #expect(try h.loader.prefetch(adUnitID: "unit", count: 12).requested == 0)
    }

    @Test func aCountBelowTheDemandTargetChangesNothing() throws {
        let plain = try Harness(Self.demandSized)
        let target = try plain.loader.prefetch(adUnitID: "unit").requested
        let h = try Harness(Self.demandSized)
        #expect(try h.loader.prefetch(adUnitID: "unit", count: 1).requested == target)
    }

    @Test func whatTheConcurrencyCapHeldBackIsAskedForLater() throws {
        let h = try Harness {
            Self.demandSized(&$0)
            $0.maximumConcurrentRequests = 1
        }
        #expect(try h.loader.prefetch(adUnitID: "unit", count: 15).requested == 5)
        h.source.succeedAll()
        h.source.succeedAll()
        h.source.succeedAll()
        #expect(h.stats().available == 15)
    }

    @Test func borrowsTakeTheCountOff() throws {
        let h = try Harness(Self.demandSized)
        try h.loader.prefetch(adUnitID: "unit", count: 12)
        h.source.succeedAll()
        #expect(h.stats().target == 12)
        // Each fresh lease takes one of the 12 wanted off: after 6 the target is the leases
        // plus the larger of the 6 still wanted and the (slow) demand's stock, not 12 beyond
        // the leases (18).
        for _ in 0..<6 {
            clock(h).advance(by: .seconds(20))
            _ = try h.lease()
        }
        #expect(h.stats().leased == 6 && h.stats().target >= 12 && h.stats().target < 18, "target \(h.stats().target)")
    }

    private func clock(_ h: Harness) -> ManualClock { h.clock }

    @Test(arguments: [41, -1])
    func aCountBeyondTheBoundIsRefusedNamingIt(count: Int) throws {
        let h = try Harness(Self.demandSized)
        #expect(
            throws: LoaderError(
                code: .invalidArgument, field: "count",
                message: "must be 0...40 (loader \"default\" maximumRetainedAdvertisements), got \(count)")
        ) { try h.loader.prefetch(adUnitID: "unit", count: count) }
        #expect(h.source.requests.isEmpty && h.loader.stats().isEmpty)
    }

    @Test func fixedSizingFillsToTheMaximumWhateverTheCount() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 12
        }
        #expect(try h.loader.prefetch(adUnitID: "unit", count: 3).requested == 12)
    }
}
