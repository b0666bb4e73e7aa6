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
        let now = self.now
        let nowMilliseconds = now.unixMilliseconds
        // The pool decides whether it loads, what it is missing and may send (events in,
        // actions out); the loader applies what is daemon-wide: the memory budget and the
        // sources' budgets.
        let plan: AdPool.TopUpPlan
        let wanted: Int
        switch pool.topUpRequested(trigger, amount: amount, at: now, isShutDown: isShutDown) {
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
            // An answer ends the failure backoff at once (after an outage too): the source
            // answers again. A Retry-After still holds. A pool no longer loading stops here.
            guard
                pool.fillAnswered(
                    asked: asked, accepted: accepted.count, latencyMilliseconds: now.unixMilliseconds - sentAt,
                    isShutDown: isShutDown)
            else { return }
            serveParked(pool)
            scheduleSweep(pool)
            perform(pool.fillSucceeded(isShutDown: isShutDown), for: pool)
            // What the concurrency cap held back, or a short answer with borrows left waiting
            // (``AdPool/followUpAfterAnswer(asked:accepted:at:)``).
            if let trigger = pool.followUpAfterAnswer(asked: asked, accepted: accepted.count, at: now) {
                topUp(pool, trigger: trigger)
            }
        case .failure(let error):
            pool.fillFailed(error)
            emit(.loadFinished, pool) { $0.error = error }
            // Backing off already, suspended or unreachable: borrows and prefetches wait out
            // the retry delay too (until an answer comes); a Retry-After holds every path. A
            // pool no longer loading stops here.
            guard let action = pool.failureSettled(error, probe: probe, at: now, isShutDown: isShutDown) else { return }
            perform(action, for: pool, leastRetryDelay: error.retryAfter ?? .zero)
            failParkedIfNothingComing(pool)
        }
    }

    /// Fail fast: ends every parked borrow with ``BorrowResult/upstreamFailed(_:)`` when no ad
    /// can arrive for them (see ``failureWithNothingComing(_:)``).
    func failParkedIfNothingComing(_ pool: AdPool) {
        guard let error = pool.parkedBorrowsFailing(at: now.unixMilliseconds) else { return }
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
        // Place the ad before telling observers, so the stats they read add up. A creative a
        // client invalidated is dropped on arrival while its block lasts.
        let drop = pool.arrivalDrop(
            expiresAt: expiresAt, at: now.unixMilliseconds, isShutDown: isShutDown,
            invalid: !delivered.creative.fits(pool.configuration.format) || isCreativeBlocked(ad, loader: pool.loader))
        if drop == .expired { noteExpiredOnArrival(pool) }
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
    ///
    /// The pool's events return `.none` once it no longer loads (a completion or observer may
    /// have disabled the loader or shut it down meanwhile), so whatever comes here is carried out.
    func perform(_ action: AdPool.FillStateMachine.Action, for pool: AdPool, leastRetryDelay: Duration = .zero) {
        switch action {
        case .none:
            break
        case .scheduleRetry(let attempt):
            let delay = max(retryDelay(attempt: attempt, policy: pool.configuration.retry), leastRetryDelay)
            scheduleRetryTimer(pool, at: pool.backOff(until: (now + delay).unixMilliseconds))
        case .scheduleProbe:
            pool.cancelRetry()
            pool.probeScheduled(
                scheduler.schedule(at: now + pool.configuration.retry.probeInterval) {
                    [weak self, weak reference = pool.reference] in
                    guard let self, let pool = reference?.pool else { return }
                    self.perform(pool.probeTimerFired(isShutDown: self.isShutDown), for: pool)
                })
        case .cancelRetry:
            pool.cancelRetry()
        case .resume:
            pool.cancelProbe()
            topUp(pool, trigger: .automatic)
        case .topUp:
            topUp(pool, trigger: .automatic)
        case .probe:
            // A probe never waits in the budget's queue: without a token, the next interval.
            if pool.probeDue(at: now, memoryRoom: memory.room) == .send, takeBudget(pool, waitAs: nil) {
                send(pool, count: 1, probe: true)
            } else {
                perform(.scheduleProbe, for: pool)
            }
        }
    }

    /// (Re)schedules the pool's retry timer at `deadline`, its backoff's end
    /// (``AdPool/notBefore``): a failure meanwhile that pushed the end later (a longer
    /// `Retry-After`) moves the retry too (``AdPool/RetryTimerStep/waitUntil(_:)``).
    func scheduleRetryTimer(_ pool: AdPool, at deadline: AdInstant) {
        pool.cancelRetry()
        pool.retryScheduled(
            scheduler.schedule(at: deadline) { [weak self, weak reference = pool.reference] in
                guard let self, let pool = reference?.pool else { return }
                switch pool.retryTimerFired(at: self.now, isShutDown: self.isShutDown) {
                case .waitUntil(let later): self.scheduleRetryTimer(pool, at: later)
                case .fill(let action): self.perform(action, for: pool)
                }
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
