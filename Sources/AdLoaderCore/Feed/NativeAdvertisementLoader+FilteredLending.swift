extension NativeAdvertisementLoader {
    /// What lending for a feed position gave.
    enum FilteredLend {
        case lent(Lease)
        /// Lendable ads were available, and the rules refused every one.
        case held
        /// No lendable ad was available.
        case none
    }

    /// Lends, under `slot`, the soonest-expiring lendable ad that `allows` accepts (given the
    /// ad and its ``CreativeKey``): ``lend(from:slot:excluding:)`` with an ``AdExclusion``, so
    /// never an ad the rules refuse.
    ///
    /// A slot that already holds a lease (a forgotten feed's rendered position, its lease not
    /// ended yet) is adopted only when the rules allow its ad; otherwise the position is held
    /// (its lease is the client's, not ended here).
    func lend(from pool: AdPool, slot: String, where allows: @escaping (Ad, CreativeKey) -> Bool) -> FilteredLend {
        if let held = pool.slots[slot],
            !allows(pool[leases[held].adHandle].ad, CreativeKey(pool[leases[held].adHandle].ad))
        {
            return .held
        }
        let exclusion = AdExclusion { !allows($0, CreativeKey($0)) }
        if case .leased(let lease, _)? = lend(from: pool, slot: slot, excluding: exclusion) { return .lent(lease) }
        return hasLendableAd(pool) ? .held : .none
    }
}
