extension AdPool {
    /// What the pool decides when a top-up of `trigger` and `amount` is asked for, before the
    /// loader's daemon-wide parts (memory budget, the source's request budget) are consulted:
    /// the first of the two events of a top-up (``topUpRequested(_:amount:at:)``), the second
    /// being ``topUpFitted(_:amount:wanted:room:)``.
    enum TopUpStart: Equatable {
        /// Nothing is sent: the pool does not load (disabled, or the loader is shut down), the
        /// fill state, the backoff, an idle pool for an automatic trigger.
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
    /// that no cap holds the pool back when nothing is missing. Nothing when the pool does
    /// not load (``loads(isShutDown:)``).
    func topUpRequested(
        _ trigger: FillTrigger, amount: FillAmount, at now: AdInstant, isShutDown: Bool
    ) -> TopUpStart {
        guard loads(isShutDown: isShutDown) else { return .none }
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

    /// What a probe timer's ``FillStateMachine/Action/probe`` does now: send one single-ad
    /// probe, or look again after the next probe interval.
    enum ProbeStep: Equatable {
        /// Send one probe of one ad, if the source's budget has a token (else `.later`).
        case send
        /// Schedule the next probe: the pool is idle, at its request limit (the answers in
        /// flight tell as much), held by a `Retry-After` longer than the probe interval, full,
        /// or the memory budget has no room.
        case later
    }

    /// Event: the probe timer asked for a probe at `now`, with `memoryRoom` ads of room under
    /// the memory budget. Refreshes the target.
    func probeDue(at now: AdInstant, memoryRoom: Int) -> ProbeStep {
        refreshTarget(at: now)
        if isIdle(at: now) || requestsInFlight >= requestLimit { return .later }
        if now.unixMilliseconds < notBefore { return .later }
        return missing > 0 && memoryRoom > 0 ? .send : .later
    }

    /// Event: a request for `asked` ads was answered with `accepted` and the answer settled
    /// (parked borrows served, the fill state told): the trigger of the top-up that goes now,
    /// nil for none. What the concurrency cap held back goes once a request is answered; a
    /// short answer that still made progress, with borrows left waiting, asks again at once
    /// (a pool with borrows parked counts as running dry, see ``topUpPlan(_:)``). An empty
    /// answer (no fill) is not re-asked at once: that would hammer an exchange that has no
    /// demand; the next borrow or prefetch asks.
    func followUpAfterAnswer(asked: Int, accepted: Int, at now: AdInstant) -> FillTrigger? {
        guard accepted > 0, heldBackByCap || (accepted < asked && !parked.isEmpty) else { return nil }
        return followUpTrigger(at: now)
    }

    /// The trigger of a top-up that follows a completion: explicit while an on-screen borrow
    /// waits (so a retry delay held for background refills does not hold it back), else
    /// automatic.
    func followUpTrigger(at now: AdInstant) -> FillTrigger {
        hasOnScreenDemand && !isIdle(at: now) ? .explicit : .automatic
    }
}
