/// Work to run once the loop's pending callbacks are done (redis's `beforeSleep`): the
/// transport's flush of connections answered outside their own read callback.
///
/// - Important: loop-confined.
public protocol DeferredWork: AnyObject {
    /// Runs `action` soon, on the loop, after the current callback; again while it returns true.
    /// Requesting while already requested keeps the first action.
    func request(_ action: @escaping () -> Bool)
    /// Releases the underlying handle; later requests are ignored.
    func close()
}

/// ``DeferredWork`` on a libuv prepare handle: while requested, the action runs once per loop
/// iteration right before the poll — after the timers of the iteration and the I/O callbacks of
/// the previous one — so answers are flushed before the loop sleeps, without forcing
/// zero-timeout polls as an idle handle would.
public final class UVDeferredWork: DeferredWork {
    private let prepare: UVPrepare

    public init(loop: UVLoop) throws(UVError) {
        prepare = try UVPrepare(loop: loop)
    }

    public func request(_ action: @escaping () -> Bool) {
        guard !prepare.isActive, !prepare.isClosing else { return }
        prepare.start { [unowned prepare] in
            if !action() { prepare.stop() }
        }
    }

    public func close() { prepare.close() }
}
