/// A cancellable piece of work registered with an ``AdScheduler``.
public protocol ScheduledTask: AnyObject {
    /// Cancels the task; its action will not run. Cancelling twice or after it ran is harmless.
    func cancel()
}

/// Runs actions at a later time on the loader's own thread.
///
/// The daemon implements it with libuv timers; tests with a manual clock whose
/// `advance(by:)` runs due actions in deadline order.
///
/// - Important: actions run on the thread that owns the loader, never re-entrantly from
///   inside `schedule(at:_:)` itself, even when the deadline is already past.
public protocol AdScheduler: AnyObject {
    func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask
}
