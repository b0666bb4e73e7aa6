extension AdPool {
    /// How much a top-up asks for: every upstream request is billed and rate-limited, so
    /// automatic top-ups wait until they can ask for a whole batch.
    enum FillAmount: Equatable {
        /// Everything missing: whole batches of `numberOfAdvertisements`, then one partial
        /// batch for the rest. An explicit prefetch.
        case complete
        /// Whole batches only, while at least one whole batch is missing; the partial rest
        /// only when the pool is running dry (``isRunningDry``). Borrows and every automatic
        /// top-up (consumption, sweep, reclaim, retry).
        case wholeBatches
    }

    /// The requests one top-up sends.
    struct TopUpPlan: Equatable {
        /// Requests of `numberOfAdvertisements` ads each.
        var wholeBatches = 0
        /// One more request of this many ads (1 ..< `numberOfAdvertisements`), or 0 for none.
        var partial = 0
    }

    /// Whether the next borrow would find nothing: no ad is available or coming beyond the
    /// borrows already parked.
    ///
    /// The low-water mark of the whole-batch policy: holding back a partial batch then would
    /// leave a cell without an ad (or a parked borrow to time out) for a whole upstream
    /// round trip, which costs more than one extra small request.
    var isRunningDry: Bool { available.count + inFlight <= parked.count }

    /// What a top-up of `amount` sends now. Never more than ``missing`` ads in all, so loaded
    /// plus in-flight ads stay at or below `maximumRetainedAdvertisements`.
    func topUpPlan(_ amount: FillAmount) -> TopUpPlan {
        let missing = self.missing
        guard missing > 0 else { return TopUpPlan() }
        let batch = configuration.numberOfAdvertisements
        let whole = missing / batch
        let rest = missing - whole * batch
        switch amount {
        case .complete:
            return TopUpPlan(wholeBatches: whole, partial: rest)
        case .wholeBatches:
            // The whole batches keep the pool from running dry; the rest waits until it adds
            // up to a batch. Only a pool with nothing available or coming gets a partial one.
            if whole > 0 { return TopUpPlan(wholeBatches: whole) }
            return TopUpPlan(partial: isRunningDry ? rest : 0)
        }
    }
}

extension AdPool {
    /// A top-up held back by the source's request-rate budget, sent when the pool's turn comes.
    struct BudgetWait: Equatable {
        var trigger: FillTrigger
        var amount: FillAmount

        /// One wait covering both: explicit and complete when either is.
        mutating func merge(_ trigger: FillTrigger, _ amount: FillAmount) {
            if trigger == .explicit { self.trigger = .explicit }
            if amount == .complete { self.amount = .complete }
        }
    }
}
