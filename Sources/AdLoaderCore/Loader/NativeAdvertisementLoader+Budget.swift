extension NativeAdvertisementLoader {
    /// Whether `pool` may send one upstream request now under its source's request-rate
    /// budget (``RequestRateBudget``); if so, the token is taken. Always true without a budget.
    ///
    /// A request goes at once when a token is in the bucket and no pool of at least the same
    /// kind waits for one: an on-screen top-up passes pools that only refill their stock,
    /// never the other way round. Otherwise, with `waitAs` given, the pool joins the
    /// source's queue (once; a second top-up merges into its wait) and is topped up again
    /// with that trigger and amount when its turn comes.
    func takeBudget(_ pool: AdPool, waitAs wait: AdPool.BudgetWait?) -> Bool {
        guard let budget = pool.budget else { return true }
        budget.refill(at: now.unixMilliseconds)
        if budget.grantee == ObjectIdentifier(pool) {
            // Served from the queue: the token it was served for is there.
            budget.grantee = nil
            budget.take()
            return true
        }
        if budget.hasToken, pool.budgetWait == nil, !hasWaiting(budget, passing: pool) {
            budget.take()
            return true
        }
        if let wait {
            if pool.waitForBudget(wait) {
                budget.waiting.append(SourceRequestBudget.Waiting(reference: pool.reference))
                budget.waits += 1
            }
            scheduleBudgetTimer(budget)
        }
        return false
    }

    /// Whether a pool waits that `pool` may not pass: any waiting pool when `pool` only
    /// refills, a waiting pool with on-screen demand when `pool` has on-screen demand.
    private func hasWaiting(_ budget: SourceRequestBudget, passing pool: AdPool) -> Bool {
        guard !budget.waiting.isEmpty else { return false }
        guard pool.hasOnScreenDemand else { return true }
        return budget.waiting.contains { $0.reference?.pool.hasOnScreenDemand == true }
    }

    /// Keeps one wakeup at the time the next token is in the bucket, while pools wait.
    func scheduleBudgetTimer(_ budget: SourceRequestBudget) {
        guard budget.timer == nil, !budget.waiting.isEmpty, !isShutDown else { return }
        let delay = budget.millisecondsUntilToken
        budget.timer = scheduler.schedule(at: now + .milliseconds(delay)) { [weak self, weak budget] in
            guard let self, let budget else { return }
            budget.timer = nil
            self.serveBudgetQueue(budget)
        }
    }

    /// Tops up waiting pools while tokens last: first the pool that waited longest among those
    /// with on-screen demand (``AdPool/hasOnScreenDemand``), else the pool that waited longest.
    /// A pool that wants more than one request goes to the back of the queue after each one,
    /// so pools take turns. Pools disabled, removed or gone idle meanwhile are dropped from
    /// the queue: no request goes for a pool nobody asks for any more.
    func serveBudgetQueue(_ budget: SourceRequestBudget) {
        guard !isShutDown else { return }
        budget.refill(at: now.unixMilliseconds)
        while budget.hasToken, !budget.waiting.isEmpty {
            let index = budget.waiting.firstIndex { $0.reference?.pool.hasOnScreenDemand == true } ?? 0
            let entry = budget.waiting.remove(at: index)
            guard let pool = entry.reference?.pool, let wait = pool.budgetTurnCame(at: now),
                entries[pool.loader]?.pools[pool.key] === pool
            else { continue }
            // Every pass either spends a token (the grantee's request) or drops an entry.
            budget.grantee = ObjectIdentifier(pool)
            budget.serving = (ObjectIdentifier(pool), wait)
            topUp(pool, trigger: wait.trigger, amount: wait.amount)
            budget.grantee = nil
            budget.serving = nil
        }
        scheduleBudgetTimer(budget)
    }
}
