// SKELETON: the public API is fixed; the bodies are filled in by the core work (issue 2).

/// A handle on a borrow that is waiting for an ad.
public protocol ParkedBorrow: AnyObject {
    /// Withdraws the borrow (client cancelled or went away); its completion is not called.
    func cancel()
}

/// Identifies an observer registered with ``NativeAdvertisementLoader/addObserver(_:)``.
public struct ObserverToken: Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// Keeps native ads loaded per (loader, ad unit) and lends them to feed cells.
///
/// - Important: not thread-safe. Create, call and observe it on one thread (the daemon's
///   event loop); demand-source completions and scheduler actions arrive on that thread.
public final class NativeAdvertisementLoader {
    /// - Parameters:
    ///   - loaders: the named configurations; each is validated, names must be unique.
    ///   - sources: demand sources by name; every loader's `source` must be present.
    ///   - clock: the source of "now".
    ///   - scheduler: runs sweeps, retries, lease timeouts and borrow waits.
    ///   - idSeed: distinguishes ad and lease ids of this instance from earlier ones.
    /// - Throws: ``ConfigError`` naming the first bad setting.
    public init(
        loaders: [LoaderConfiguration], sources: [String: any DemandSource], clock: any AdClock,
        scheduler: any AdScheduler, idSeed: UInt64 = 0
    ) throws(ConfigError) {
        fatalError("unimplemented")
    }

    /// The configured loaders, by name.
    public var configurations: [String: LoaderConfiguration] { fatalError("unimplemented") }

    /// Tops the pool up to `maximumRetainedAdvertisements`, counting loaded and in-flight ads.
    /// - Throws: ``LoaderError`` `.invalidArgument` for an empty ad unit or unknown loader,
    ///   `.unavailable` for a disabled loader.
    @discardableResult
    public func prefetch(adUnitID: String, loader: String = LoaderConfiguration.defaultName) throws(LoaderError)
        -> PrefetchResult
    {
        fatalError("unimplemented")
    }

    /// Lends one valid ad. `completion` is called exactly once — synchronously when an ad is
    /// available, the slot already holds a lease, or `wait` is zero — unless the returned
    /// ``ParkedBorrow`` is cancelled first.
    /// - Parameters:
    ///   - slot: the feed cell; while it holds a lease, borrowing for it returns the same lease.
    ///   - wait: how long to park when the pool is empty; at most the loader's `maximumBorrowWait`.
    /// - Returns: a handle when the call parked, else nil.
    /// - Throws: ``LoaderError`` `.invalidArgument` (empty ad unit, unknown loader, wait too
    ///   long or negative), `.unavailable` (disabled loader).
    @discardableResult
    public func borrow(
        adUnitID: String, loader: String = LoaderConfiguration.defaultName, slot: String? = nil,
        wait: Duration = .zero, completion: @escaping (BorrowResult) -> Void
    ) throws(LoaderError) -> (any ParkedBorrow)? {
        fatalError("unimplemented")
    }

    /// Ends a lease.
    /// - Throws: ``LoaderError`` `.notFound` for an unknown, returned or reclaimed lease.
    @discardableResult
    public func returnLease(_ leaseID: UInt64, shown: Bool) throws(LoaderError) -> ReturnOutcome {
        fatalError("unimplemented")
    }

    /// Stats of every pool matching the filters (nil = all), sorted by loader then ad unit.
    public func stats(loader: String? = nil, adUnitID: String? = nil) -> [PoolStats] {
        fatalError("unimplemented")
    }

    /// Registers an observer called synchronously, on the loader's thread, for every event.
    public func addObserver(_ observer: @escaping (AdEvent) -> Void) -> ObserverToken {
        fatalError("unimplemented")
    }

    public func removeObserver(_ token: ObserverToken) {
        fatalError("unimplemented")
    }

    /// Disabling drops the loader's ads (each reported as removed, reason "disabled"), ends
    /// its parked borrows with `.unavailable` and stops filling until enabled again.
    public func setEnabled(_ enabled: Bool, loader: String) throws(LoaderError) {
        fatalError("unimplemented")
    }

    /// Ends every parked borrow with `.unavailable`, cancels timers and stops loading; later
    /// calls throw `.unavailable`. Ads in flight are dropped when they arrive.
    public func shutdown() {
        fatalError("unimplemented")
    }
}
