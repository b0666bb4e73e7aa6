import Testing

@testable import AdLoaderCore

struct AdPoolFillPolicyTests {
    typealias Plan = AdPool.TopUpPlan

    /// A pool of `maximum` with `available` ads loaded and `inFlight` asked for.
    static func pool(batch: Int, maximum: Int, available: Int, inFlight: Int = 0) -> AdPool {
        var configuration = LoaderConfiguration()
        configuration.numberOfAdvertisements = batch
        configuration.maximumRetainedAdvertisements = maximum
        configuration.sizing = .fixed
        final class Silent: DemandSource {
            func loadAds(
                _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) {}
        }
        let pool = AdPool(
            loader: "default", adUnitID: "unit", configuration: configuration, source: Silent(),
            now: AdInstant(unixMilliseconds: 0))
        for index in 0..<available {
            let ad = Ad(
                id: "ad-\(index)", adUnitID: "unit", loader: "default",
                creative: .native(NativeAdContent(headline: "\(index)")),
                loadedAt: AdInstant(unixMilliseconds: 0), expiresAt: AdInstant(unixMilliseconds: 1_000))
            pool.insertAvailable(ad, sequence: UInt64(index))
        }
        if inFlight > 0 { pool.requestSent(count: inFlight) }
        return pool
    }

    @Test func completeFillsEverythingEndingWithAPartialBatch() {
        #expect(
            Self.pool(batch: 5, maximum: 12, available: 0).topUpPlan(.complete) == Plan(wholeBatches: 2, partial: 2))
        #expect(
            Self.pool(batch: 5, maximum: 12, available: 9).topUpPlan(.complete) == Plan(wholeBatches: 0, partial: 3))
        #expect(
            Self.pool(batch: 5, maximum: 12, available: 2).topUpPlan(.complete) == Plan(wholeBatches: 2, partial: 0))
        #expect(Self.pool(batch: 5, maximum: 12, available: 7, inFlight: 5).topUpPlan(.complete) == Plan())
    }

    @Test func wholeBatchesWaitForAWholeBatchUnlessDry() {
        // 4 missing, 6 available: wait.
        #expect(Self.pool(batch: 5, maximum: 10, available: 6).topUpPlan(.wholeBatches) == Plan())
        // 4 missing, 6 in flight, none available: ads are coming, wait.
        #expect(Self.pool(batch: 5, maximum: 10, available: 0, inFlight: 6).topUpPlan(.wholeBatches) == Plan())
        // 7 missing: one whole batch, the 2 left wait.
        #expect(Self.pool(batch: 5, maximum: 10, available: 3).topUpPlan(.wholeBatches) == Plan(wholeBatches: 1))
        // 7 missing and dry: the whole batch is enough to keep ads coming.
        #expect(Self.pool(batch: 5, maximum: 7, available: 0).topUpPlan(.wholeBatches) == Plan(wholeBatches: 1))
        // 3 missing and dry: a partial batch.
        #expect(Self.pool(batch: 5, maximum: 3, available: 0).topUpPlan(.wholeBatches) == Plan(partial: 3))
        // Batch of one: every missing ad is a whole batch.
        #expect(Self.pool(batch: 1, maximum: 3, available: 1).topUpPlan(.wholeBatches) == Plan(wholeBatches: 2))
    }

    @Test func neverAsksBeyondTheMaximum() {
        for batch in 1...5 {
            for maximum in 1...12 {
                for available in 0...maximum {
                    for inFlight in 0...(maximum - available) {
                        let pool = Self.pool(batch: batch, maximum: maximum, available: available, inFlight: inFlight)
                        for amount in [AdPool.FillAmount.complete, .wholeBatches] {
                            let plan = pool.topUpPlan(amount)
                            #expect(plan.wholeBatches * batch + plan.partial <= pool.missing)
                            #expect((0..<batch).contains(plan.partial))
                            if amount == .complete {
                                #expect(plan.wholeBatches * batch + plan.partial == pool.missing)
                            }
                        }
                    }
                }
            }
        }
    }

    // The top-up as two events of the pool (the loader only applies the daemon-wide budgets).

    @Test func aTopUpRequestedSaysWhatIsMissingOrThatNothingIs() {
        let now = AdInstant(unixMilliseconds: 0)
        let stocked = Self.pool(batch: 5, maximum: 10, available: 10)
        #expect(
            stocked.topUpRequested(.explicit, amount: .complete, at: now, isShutDown: false)
                == .nothingMissing(clearHeldBack: false))
        let empty = Self.pool(batch: 5, maximum: 12, available: 0)
        guard
            case .wants(let plan, let wanted, _) = empty.topUpRequested(
                .explicit, amount: .complete, at: now, isShutDown: false)
        else {
            Issue.record("an empty pool wants nothing")
            return
        }
        #expect(plan == Plan(wholeBatches: 2, partial: 2))
        #expect(wanted == 12)
    }

    @Test func aTopUpFittedIntoTooLittleRoomCountsTheRefusalAndKeepsWholeBatches() {
        let pool = Self.pool(batch: 5, maximum: 12, available: 0, inFlight: 0)
        let full = pool.topUpFitted(Plan(wholeBatches: 2, partial: 2), amount: .complete, wanted: 12, room: 100)
        #expect(full.plan == Plan(wholeBatches: 2, partial: 2))
        #expect(!full.refusedByMemory)
        #expect(full.holdBack(budgetShort: false) == nil)
        #expect(full.holdBack(budgetShort: true) == .sourceBudget)
        let short = pool.topUpFitted(Plan(wholeBatches: 2, partial: 2), amount: .wholeBatches, wanted: 12, room: 7)
        // One whole batch fits; a pool that is not running dry sends no partial one.
        #expect(short.plan == Plan(wholeBatches: 1, partial: 0))
        #expect(short.refusedByMemory)
        #expect(short.holdBack(budgetShort: false) == .memoryBudget)
        #expect(pool.stats.budgetRefused == 5)
        let completing = pool.topUpFitted(Plan(wholeBatches: 2, partial: 2), amount: .complete, wanted: 12, room: 7)
        #expect(completing.plan == Plan(wholeBatches: 1, partial: 2))
        #expect(completing.free == pool.requestLimit)
    }
}
