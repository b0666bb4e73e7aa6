extension NativeAdvertisementLoader {
    /// The most ads one refused top-up drops to make room under the memory budget, in
    /// batches of the refused pool's `numberOfAdvertisements` (and never more than
    /// ``expiryBatchLimit``): eviction runs on the loop, so its work per call is bounded; a
    /// later top-up of the same pool drops more if it still needs room.
    public static let memoryEvictionBatches = 4

    /// Makes room under the daemon-wide memory budget for `pool`, a pool with demand whose
    /// top-up the budget refused `need` ads of: drops unleased, lendable ads of other pools,
    /// the least useful first, reported as ``AdDropReason/memoryBudget``:
    /// 1. ads of idle pools (``AdPool/isIdle(at:)``), soonest expiry first;
    /// 2. then, only if `need` is still unmet, ads of other pools stocked beyond their own
    ///    demand target (``AdPool/target``), soonest expiry first, never taking such a pool
    ///    below its target.
    ///
    /// A leased ad is never dropped. An ad found unlendable on the way (less than the minimum
    /// remaining life left) is dropped as expired, which frees room too. Runs only on the
    /// refused-by-memory branch of ``topUp(_:trigger:amount:)``: a borrow of a stocked pool
    /// never gets here. The work is one pass over the pools plus, per ad dropped, one pass
    /// over the pools that may give one.
    /// - Returns: the number of ads dropped.
    @discardableResult
    func makeRoom(for pool: AdPool, need: Int) -> Int {
        let batch = max(1, pool.configuration.numberOfAdvertisements)
        let limit = min(need, Self.memoryEvictionBatches * batch, Self.expiryBatchLimit)
        guard limit > 0 else { return 0 }
        let now = self.now
        var idle: [AdPool] = []
        var stocked: [AdPool] = []
        for entry in entries.values {
            for other in entry.pools.values where other !== pool {
                switch other.evictionRank(at: now) {
                case .idle: idle.append(other)
                case .stocked: stocked.append(other)
                case .none: break
                }
            }
        }
        var dropped = 0
        dropped += evict(from: &idle, upTo: limit, keepingTarget: false)
        if dropped < limit {
            dropped += evict(from: &stocked, upTo: limit - dropped, keepingTarget: true)
        }
        return dropped
    }

    /// Drops up to `limit` available ads of `candidates`, the soonest to expire across them
    /// first (ties: the ad loaded first); with `keepingTarget`, none that would take its pool
    /// below its target. Removes candidates that have nothing more to give.
    private func evict(from candidates: inout [AdPool], upTo limit: Int, keepingTarget: Bool) -> Int {
        var dropped = 0
        while dropped < limit {
            var best: (index: Int, deadline: Int64, sequence: UInt64)?
            var index = 0
            while index < candidates.count {
                guard let first = candidates[index].evictionCandidate(keepingTarget: keepingTarget) else {
                    candidates.swapAt(index, candidates.count - 1)
                    candidates.removeLast()
                    continue
                }
                if best == nil || first.deadline < best!.deadline
                    || (first.deadline == best!.deadline && first.sequence < best!.sequence)
                {
                    best = (index, first.deadline, first.sequence)
                }
                index += 1
            }
            guard let chosen = best else { break }
            let victim = candidates[chosen.index]
            let (ad, reason) = victim.evictSoonest(at: now.unixMilliseconds)
            reportDropped(ad, from: victim, reason: reason)
            dropped += 1
        }
        return dropped
    }
}
