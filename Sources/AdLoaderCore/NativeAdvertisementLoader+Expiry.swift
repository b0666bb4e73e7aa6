extension NativeAdvertisementLoader {
    /// Removes every available ad of `pool` whose expiry has passed.
    ///
    /// Expired ads are at the top of the expiry heap, so this costs O(log n) per expired ad
    /// and O(1) when none is due: safe to call on every borrow and prefetch.
    /// - Returns: the number of ads expired.
    @discardableResult
    func purgeExpired(_ pool: AdPool) -> Int {
        var expired = 0
        let nowMilliseconds = now.unixMilliseconds
        while let soonest = pool.soonestAvailable, soonest.expiresAt.unixMilliseconds <= nowMilliseconds {
            let ad = pool.discardAvailable(soonest.handle)
            pool.stats.expired += 1
            expired += 1
            emit(.expired, pool) { $0.adID = ad.id }
        }
        return expired
    }

    /// Keeps a sweep timer running every `sweepInterval` while the pool has available ads.
    func scheduleSweep(_ pool: AdPool) {
        guard pool.sweepTimer == nil, pool.enabled, !isShutDown, !pool.available.isEmpty else { return }
        pool.sweepTimer = scheduler.schedule(at: now + pool.configuration.sweepInterval) { [weak self, weak pool] in
            guard let self, let pool else { return }
            pool.sweepTimer = nil
            self.sweep(pool)
        }
    }

    /// One sweep: expire what is due, top up if that left the pool short, re-arm.
    func sweep(_ pool: AdPool) {
        guard pool.enabled, !isShutDown else { return }
        if purgeExpired(pool) > 0 {
            topUp(pool, trigger: .automatic)
        }
        scheduleSweep(pool)
    }
}
