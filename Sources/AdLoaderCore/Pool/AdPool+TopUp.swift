extension AdPool {
    /// What the pool decides when a top-up of `trigger` and `amount` is asked for, before the
    /// loader's daemon-wide parts (memory budget, the source's request budget) are consulted:
    /// the first of the two events of a top-up (``topUpRequested(_:amount:at:)``), the second
    /// being ``topUpFitted(_:amount:wanted:room:)``.
    enum TopUpStart: Equatable {
        /// Nothing is sent (disabled is the loader's check; here: the fill state, the backoff,
        /// an idle pool for an automatic trigger).
        case none
        /// The source is unreachable and the backoff allows one probe of one ad now, if the
        /// memory budget has room and the source's budget a token.
        case probe
        /// Nothing is missing; `clearHeldBack`: the pool was held back by a cap, which no
        /// longer binds (the loader tells observers).
        case nothingMissing(clearHeldBack: Bool)
        /// `plan` is missing, `wanted` ads in all; `mayMakeRoom`: the pool has demand, so the
        /// loader may drop other pools' less useful ads when the memory budget is short.
        case wants(TopUpPlan, wanted: Int, mayMakeRoom: Bool)
    }

    /// The requests a top-up sends, once the memory budget was applied (the second event).
    struct TopUpOrder: Equatable {
        var plan: TopUpPlan
        /// Ads per whole batch (`numberOfAdvertisements`).
        var batch: Int
        /// Requests the pool may still have in flight (its limit less those in flight).
        var free: Int
        /// The memory budget refused part of what was missing.
        var refusedByMemory: Bool
        /// The pool's concurrency ceiling (`maximumConcurrentRequests`) holds back requests
        /// its in-flight target wants.
        var ceilingBinds: Bool

        /// The cap that holds the pool back when nothing (more) is sent because of `free`
        /// or, with `budgetShort`, the source's request budget; nil for none.
        func holdBack(budgetShort: Bool) -> HoldBack? {
            budgetShort ? .sourceBudget : ceilingBinds ? .poolCeiling : refusedByMemory ? .memoryBudget : nil
        }
    }

    /// Event: a top-up is asked for. Refreshes the target and the in-flight target; notes
    /// that no cap holds the pool back when nothing is missing.
    func topUpRequested(_ trigger: FillTrigger, amount: FillAmount, at now: AdInstant) -> TopUpStart {
        let nowMilliseconds = now.unixMilliseconds
        if !fill.allowsLoad(trigger) {
            // Unreachable: a borrow or prefetch may send one probe once the backoff allows, so
            // the first answer after an outage resumes filling without waiting for the timer.
            if trigger == .explicit, fill.state == .unreachable, requestsInFlight == 0, nowMilliseconds >= notBefore,
                !isIdle(at: now)
            {
                return .probe
            }
            return .none
        }
        // One discipline for every path: after a failure nothing goes before the backoff
        // (the retry delay, at least the source's Retry-After) has passed.
        if nowMilliseconds < notBefore { return .none }
        if trigger == .automatic && isIdle(at: now) { return .none }
        refreshTarget(at: now)
        let plan = topUpPlan(amount)
        guard plan.wholeBatches > 0 || plan.partial > 0 else {
            // Nothing missing (most borrows of a stocked pool): nothing holds the pool back.
            noteHeldBackByCap(false)
            return .nothingMissing(clearHeldBack: heldBack != nil)
        }
        refreshInFlightTarget(at: now)
        let wanted = plan.wholeBatches * configuration.numberOfAdvertisements + plan.partial
        return .wants(plan, wanted: wanted, mayMakeRoom: !isIdle(at: now))
    }

    /// Event: the memory budget has `room` ads for the `plan` of ``topUpRequested(_:amount:at:)``.
    /// Counts what the budget refused, fits the plan into the room, and notes whether the
    /// concurrency cap holds requests back.
    func topUpFitted(_ plan: TopUpPlan, amount: FillAmount, wanted: Int, room: Int) -> TopUpOrder {
        let limit = requestLimit
        let batch = configuration.numberOfAdvertisements
        var plan = plan
        var refusedByMemory = false
        if wanted > room {
            countBudgetRefused(wanted - room)
            refusedByMemory = true
            // What fits: whole batches, and the rest as a partial batch only where one would
            // go anyway (an explicit prefetch's completion, a pool running dry).
            let whole = min(plan.wholeBatches, room / batch)
            let mayPartial = amount == .complete || (whole == 0 && isRunningDry)
            plan = TopUpPlan(
                wholeBatches: whole,
                partial: mayPartial ? min(room - whole * batch, batch - 1, wanted - whole * batch) : 0)
        }
        let free = limit - requestsInFlight
        let requests = plan.wholeBatches + (plan.partial > 0 ? 1 : 0)
        noteHeldBackByCap(requests > free)
        return TopUpOrder(
            plan: plan, batch: batch, free: free, refusedByMemory: refusedByMemory,
            ceilingBinds: requests > free && limit < inFlightTarget)
    }

    /// The trigger of a top-up that follows a completion: explicit while an on-screen borrow
    /// waits (so a retry delay held for background refills does not hold it back), else
    /// automatic.
    func followUpTrigger(at now: AdInstant) -> FillTrigger {
        hasOnScreenDemand && !isIdle(at: now) ? .explicit : .automatic
    }
}
