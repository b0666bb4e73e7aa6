public import AdLoaderWire

/// The service's one hook for metrics: told when each call starts and how it ended.
///
/// The service reports every call it handles — answered at once or after it stayed open (a
/// parked Borrow, a Watch) — exactly once, with its method, final status code and the
/// timestamp ``callStarted()`` gave when it arrived. Timestamps are the observer's own
/// (the daemon uses a monotonic nanosecond clock; the service only hands them back).
///
/// - Important: loop-confined, like the service; called on the hot path, so keep it cheap.
public protocol CallObserver: AnyObject {
    /// A timestamp for a call arriving now.
    func callStarted() -> UInt64
    /// A call ended with `code`; `startedAt` is what ``callStarted()`` returned for it.
    func callFinished(_ method: ServiceMethod, code: Status.Code, startedAt: UInt64)
    /// A transport refused a call before the service saw it (unknown method, a request that
    /// does not decode, a per-connection limit): reported through
    /// ``AdLoaderService/callRefused(method:code:)``; `method` is nil for an unknown one.
    func callRefused(_ method: ServiceMethod?, code: Status.Code)
}

extension CallObserver {
    /// Does nothing: an observer that only times served calls needs nothing.
    public func callRefused(_ method: ServiceMethod?, code: Status.Code) {}
}
