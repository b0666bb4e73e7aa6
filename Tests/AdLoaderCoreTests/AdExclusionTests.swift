import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct AdExclusionTests {
    private func borrow(
        _ h: Harness, slot: String? = nil, excluding exclusion: AdExclusion?
    ) throws(LoaderError) -> BorrowResult {
        let outcome = try h.loader.borrow(
            adUnitID: "unit", slot: slot, excluding: exclusion, whenServed: BorrowOutcome.neverServed)
        guard let answer = outcome.answer else { fatalError("a borrow without wait answered \(outcome)") }
        return answer
    }

    @Test func anExcludedCreativeIsPassedOverForTheSoonestThatPasses() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 1
        }
        h.source.creativeID = { "crid-\($0)" }
        try h.loader.prefetch(adUnitID: "unit")
        let start = h.clock.now
        h.source.succeed(0, sourceExpiry: start + .seconds(600))  // crid-1, lent first without exclusion
        h.source.succeed(0, sourceExpiry: start + .seconds(900))  // crid-2
        h.source.succeed(0)  // crid-3
        guard case .leased(let lease, reused: false) = try borrow(h, excluding: .creatives([.sourceID("crid-1")]))
        else {
            throw TestFailure("no lease")
        }
        #expect(lease.ad.creativeID == "crid-2")
        // Without an exclusion the soonest (crid-1) is lent, as always.
        #expect(try h.lease().ad.creativeID == "crid-1")
        // Everything left excluded: answered as an empty pool, counted as a miss.
        let misses = h.stats().borrowMisses
        #expect(try borrow(h, excluding: AdExclusion { _ in true }) == .noAdYet)
        #expect(h.stats().borrowMisses == misses + 1)
        #expect(h.stats().available == 1)
    }

    @Test func aSlotKeepsItsLeaseWhateverTheExclusion() throws {
        let h = try Harness()
        try h.fill()
        let first = try h.lease(slot: "feed/3")
        let again = try borrow(h, slot: "feed/3", excluding: .ads([first.ad.id]))
        guard case .leased(let same, reused: true) = again else { throw TestFailure("slot lost its lease: \(again)") }
        #expect(same.id == first.id)
    }

    @Test func aParkedBorrowWithAnExclusionGetsOnlyAnAdThatPasses() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        h.source.creativeID = { "crid-\($0)" }
        var answers: [BorrowResult] = []
        let exclusion = AdExclusion.creatives([.sourceID("crid-1")])
        let outcome = try h.loader.borrow(adUnitID: "unit", wait: .seconds(5), excluding: exclusion) {
            answers.append($0)
        }
        #expect(outcome.parked != nil)
        h.source.succeed()  // crid-1: excluded, so the parked borrow is answered "no ad yet"
        #expect(answers == [.noAdYet])
        #expect(h.stats().available == 1)
        let next = try h.loader.borrow(
            adUnitID: "unit", wait: .seconds(5), excluding: .creatives([.sourceID("crid-9")]),
            whenServed: BorrowOutcome.neverServed)
        // crid-1 passes this one's exclusion: lent at once, nothing parked.
        guard case .leased(let lease, _)? = next.answer else { throw TestFailure("not lent: \(next)") }
        #expect(lease.ad.creativeID == "crid-1")
    }
}
