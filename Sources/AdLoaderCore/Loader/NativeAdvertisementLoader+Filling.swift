extension NativeAdvertisementLoader {
    /// Asks the source for ads the pool is missing, when the pool's fill state allows
    /// `trigger`: everything missing for `.complete` (an explicit prefetch), else only whole
    /// batches of `numberOfAdvertisements` (see ``AdPool/topUpPlan(_:)``).
    /// - Returns: the number of ads asked for.
    ///
    /// An idle pool (``AdPool/isIdle(at:)``) sends nothing for an automatic trigger. At most
    /// `maximumConcurrentRequests` requests are in flight per pool: what the cap holds back is
    /// asked for as earlier requests complete (an automatic top-up then, or an explicit one
    /// when an on-screen borrow waits: see ``AdPool/hasOnScreenDemand``). Each request takes a
    /// token of the source's request-rate budget, if it has one; without a token the pool waits
    /// in the source's queue, on-screen demand first (``takeBudget(_:waitAs:)``). When the
    /// daemon-wide memory budget refuses part of the top-up of a pool with demand, unleased
    /// ads of idle pools (then of pools stocked beyond their target) are dropped to make room
    /// (``makeRoom(for:need:)``).
    @discardableResult
    func topUp(_ pool: AdPool, trigger: AdPool.FillTrigger, amount: AdPool.FillAmount = .wholeBatches) -> Int {
        guard pool.enabled, !isShutDown else { return 0 }
        let now = self.now
        let nowMilliseconds = now.unixMilliseconds
        // The pool decides what it is missing and may send (events in, actions out); the
        // loader applies what is daemon-wide: the memory budget and the sources' budgets.
        let plan: AdPool.TopUpPlan
        let wanted: Int
        switch pool.topUpRequested(trigger, amount: amount, at: now) {
        case .none:
            return 0
        case .probe:
            guard memory.room > 0, takeBudget(pool, waitAs: nil) else { return 0 }
            send(pool, count: 1, probe: true)
            return 1
        case .nothingMissing(let clearHeldBack):
            if clearHeldBack { noteHeldBack(pool, nil, at: nowMilliseconds) }
            return 0
        case .wants(let missing, let count, let mayMakeRoom):
            plan = missing
            wanted = count
            if wanted > memory.room && makesRoomUnderMemoryBudget && mayMakeRoom {
                // Beyond the budget, a pool with demand gets room from the least useful ads:
                // idle pools' first, then other pools' stock beyond their own target (bounded
                // work per call; see ``makeRoom(for:need:)``).
                makeRoom(for: pool, need: wanted - memory.room)
            }
        }
        let order = pool.topUpFitted(plan, amount: amount, wanted: wanted, room: memory.room)
        var free = order.free
        let batch = order.batch
        if free <= 0 {
            noteHeldBack(pool, order.holdBack(budgetShort: false), at: nowMilliseconds)
            return 0
        }
        let wait = AdPool.BudgetWait(trigger: trigger, amount: amount)
        var asked = 0
        var budgetShort = false
        for _ in 0..<order.plan.wholeBatches where free > 0 {
            guard takeBudget(pool, waitAs: wait) else {
                budgetShort = true
                break
            }
            send(pool, count: batch, probe: false)
            asked += batch
            free -= 1
        }
        if !budgetShort, order.plan.partial > 0, free > 0 {
            if takeBudget(pool, waitAs: wait) {
                send(pool, count: order.plan.partial, probe: false)
                asked += order.plan.partial
            } else {
                budgetShort = true
            }
        }
        noteHeldBack(pool, order.holdBack(budgetShort: budgetShort), at: nowMilliseconds)
        return asked
    }

    /// Reports the first ad of a source that arrived too short to be lent (once per source).
    func noteExpiredOnArrival(_ pool: AdPool) {
        let source = pool.configuration.source
        guard !expiredOnArrivalReported.contains(source) else { return }
        expiredOnArrivalReported.insert(source)
        onExpiredOnArrival?(pool.loader, source, .milliseconds(pool.minimumLifeMilliseconds))
    }

    /// Records whether a configured cap holds `pool` back now (nil: none), tells observers
    /// (event `heldBack`) when that starts, changes or stops, and accumulates the time.
    func noteHeldBack(_ pool: AdPool, _ reason: HoldBack?, at now: Int64) {
        guard pool.heldBackChanged(to: reason, at: now) else { return }
        emit(.heldBack, pool) { $0.holdBack = reason }
        onHeldBack?(
            pool.loader, pool.adUnitID, reason, reason?.setting(loader: pool.loader, source: pool.configuration.source))
    }

    /// The trigger of a top-up that follows a completion (``AdPool/followUpTrigger(at:)``).
    func followUpTrigger(_ pool: AdPool) -> AdPool.FillTrigger { pool.followUpTrigger(at: now) }

    /// Sends one upstream request (its budget token already taken); its ads count as in
    /// flight until the source answers.
    func send(_ pool: AdPool, count: Int, probe: Bool) {
        pool.requestSent(count: count)
        let sentAt = now.unixMilliseconds
        pool.source.loadAds(pool.request, count: count) { [weak self, pool] result in
            self?.loadCompleted(pool, asked: count, probe: probe, sentAt: sentAt, result: result)
        }
    }

    func loadCompleted(
        _ pool: AdPool, asked: Int, probe: Bool, sentAt: Int64, result: Result<[DeliveredAd], UpstreamError>
    ) {
        pool.requestAnswered(asked: asked)
        switch result {
        case .success(let delivered):
            // A source that answers with more than asked must not overfill the pool.
            let accepted = delivered.prefix(asked)
            for ad in accepted { receive(ad, into: pool) }
            emit(.loadFinished, pool) { $0.count = accepted.count }
            guard pool.enabled, !isShutDown else { return }
            // An answer ends the failure backoff at once (after an outage too): the source
            // answers again. A Retry-After still holds.
            pool.fillAnswered(
                asked: asked, accepted: accepted.count, latencyMilliseconds: now.unixMilliseconds - sentAt)
            serveParked(pool)
            scheduleSweep(pool)
            perform(pool.fillSucceeded(), for: pool)
            // What the concurrency cap held back goes now that a request is answered. A short
            // answer that still made progress, with borrows left waiting: ask again now rather
            // than leave them to time out (a pool with borrows parked counts as running dry,
            // see `topUpPlan`). An empty answer (no fill) is not re-asked at once: that would
            // hammer an exchange that has no demand; the next borrow or prefetch asks.
            if !accepted.isEmpty, pool.heldBackByCap || (accepted.count < asked && !pool.parked.isEmpty) {
                topUp(pool, trigger: followUpTrigger(pool))
            }
        case .failure(let error):
            pool.fillFailed(error)
            emit(.loadFinished, pool) { $0.error = error }
            guard pool.enabled, !isShutDown else { return }
            // Backing off already, suspended or unreachable: borrows and prefetches wait out
            // the retry delay too (until an answer comes); a Retry-After holds every path.
            let action = pool.failureSettled(error, probe: probe, at: now)
            perform(action, for: pool, leastRetryDelay: error.retryAfter ?? .zero)
            failParkedIfNothingComing(pool)
        }
    }

    /// Fail fast: ends every parked borrow with ``BorrowResult/upstreamFailed(_:)`` when no ad
    /// can arrive for them (see ``failureWithNothingComing(_:)``).
    func failParkedIfNothingComing(_ pool: AdPool) {
        guard !pool.parked.isEmpty, !hasLendableAd(pool), let error = failureWithNothingComing(pool) else { return }
        for parked in pool.takeAllParked() {
            pool.countMiss()
            parked.take()?(.upstreamFailed(error))
        }
    }

    /// Counts and stores one arriving ad; drops it when the pool no longer loads or its
    /// creative does not fit the loader's format or is blocked (invalidated), and expires it at once when
    /// it arrives with less than the minimum remaining life left.
    private func receive(_ delivered: DeliveredAd, into pool: AdPool) {
        let loadedAt = now
        var expiresAt = loadedAt + pool.configuration.lifetime
        if let sourceExpiry = delivered.sourceExpiry, sourceExpiry < expiresAt { expiresAt = sourceExpiry }
        let ad = Ad(
            id: ids.nextAdID(), adUnitID: pool.adUnitID, loader: pool.loader, creative: delivered.creative,
            format: pool.configuration.format,
            loadedAt: loadedAt, expiresAt: expiresAt, sourceContext: delivered.context,
            creativeID: delivered.creativeID, advertiserDomains: delivered.advertiserDomains,
            categories: delivered.categories)
        pool.adArrived(lifeMilliseconds: expiresAt.unixMilliseconds - loadedAt.unixMilliseconds)
        // Place the ad before telling observers, so the stats they read add up.
        let drop: AdDropReason?
        if isShutDown {
            drop = .shutdown
        } else if !pool.enabled {
            drop = pool.isRetired ? .reconfigured : .disabled
        } else if !delivered.creative.fits(pool.configuration.format) || isCreativeBlocked(ad, loader: pool.loader) {
            // A creative a client invalidated is dropped on arrival while its block lasts.
            drop = .invalidated
        } else if !isLendable(expiresAt: expiresAt, in: pool) {
            drop = .expired
            pool.countExpiredOnArrival()
            noteExpiredOnArrival(pool)
        } else {
            drop = nil
        }
        if let drop {
            pool.countDropped(drop)
            emit(.received, pool) { $0.adID = ad.id }
            reportDropped(ad, from: pool, reason: drop)
        } else {
            pool.insertAvailable(ad, sequence: ids.lastAdSequence)
            emit(.received, pool) {
                $0.adID = ad.id
                $0.ad = ad
            }
        }
    }

    /// Carries out what the fill state machine decided; a retry waits at least `leastRetryDelay`
    /// (the source's `Retry-After`).
    func perform(_ action: AdPool.FillStateMachine.Action, for pool: AdPool, leastRetryDelay: Duration = .zero) {
        // A completion or observer may have disabled the loader or shut it down meanwhile.
        guard pool.enabled, !isShutDown else { return }
        switch action {
        case .none:
            break
        case .scheduleRetry(let attempt):
            let delay = max(retryDelay(attempt: attempt, policy: pool.configuration.retry), leastRetryDelay)
            pool.backOff(until: (now + delay).unixMilliseconds)
            scheduleRetryTimer(pool)
        case .scheduleProbe:
            pool.cancelRetry()
            pool.probeScheduled(
                scheduler.schedule(at: now + pool.configuration.retry.probeInterval) {
                    [weak self, weak reference = pool.reference] in
                    guard let self, let pool = reference?.pool else { return }
                    self.perform(pool.probeTimerFired(), for: pool)
                })
        case .cancelRetry:
            pool.cancelRetry()
        case .resume:
            pool.cancelProbe()
            topUp(pool, trigger: .automatic)
        case .topUp:
            topUp(pool, trigger: .automatic)
        case .probe:
            pool.refreshTarget(at: now)
            if pool.isIdle(at: now) || pool.requestsInFlight >= pool.requestLimit {
                // Idle: no automatic traffic. At the cap: the answers in flight tell as much.
                perform(.scheduleProbe, for: pool)
            } else if now.unixMilliseconds < pool.notBefore {
                // A Retry-After longer than the probe interval holds probes back too.
                perform(.scheduleProbe, for: pool)
            } else if pool.missing > 0 && memory.room > 0 {
                // A probe never waits in the budget's queue: without a token, the next interval.
                if takeBudget(pool, waitAs: nil) {
                    send(pool, count: 1, probe: true)
                } else {
                    perform(.scheduleProbe, for: pool)
                }
            } else {
                // Full pool: nothing to ask for yet; look again after the next interval.
                perform(.scheduleProbe, for: pool)
            }
        }
    }

    /// (Re)schedules the pool's retry timer at its backoff's end (``AdPool/notBefore``): a
    /// failure meanwhile that pushed the end later (a longer `Retry-After`) moves the retry too.
    func scheduleRetryTimer(_ pool: AdPool) {
        pool.cancelRetry()
        pool.retryScheduled(
            scheduler.schedule(at: AdInstant(unixMilliseconds: pool.notBefore)) {
                [weak self, weak reference = pool.reference] in
                guard let self, let pool = reference?.pool else { return }
                pool.retryTimerFired()
                if self.now.unixMilliseconds < pool.notBefore {
                    self.scheduleRetryTimer(pool)
                    return
                }
                self.perform(pool.retryDue(), for: pool)
            })
    }

    /// `delay * multiplier^attempt`, capped at `maximumDelay`, spread by ± `jitter`.
    func retryDelay(attempt: Int, policy: RetryPolicy) -> Duration {
        let cap = Double(policy.maximumDelay.milliseconds)
        var milliseconds = Double(policy.delay.milliseconds)
        var step = 0
        while step < attempt && milliseconds < cap {
            milliseconds *= policy.multiplier
            step += 1
        }
        milliseconds = min(milliseconds, cap)
        if policy.jitter > 0 {
            milliseconds *= 1 + policy.jitter * (2 * jitter.unit() - 1)
        }
        // Int64(_:) truncates; + 0.5 rounds the non-negative value without libm.
        return .milliseconds(Int64(max(0, milliseconds) + 0.5))
    }
}
