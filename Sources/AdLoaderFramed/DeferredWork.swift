import AdLoaderUV

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

/// ``DeferredWork`` on a libuv idle handle: while active, the loop polls without blocking and
/// runs the action once per iteration, after I/O.
public final class UVDeferredWork: DeferredWork {
    private let idle: UVIdle

    public init(loop: UVLoop) throws(UVError) {
        idle = try UVIdle(loop: loop)
    }

    public func request(_ action: @escaping () -> Bool) {
        guard !idle.isActive, !idle.isClosing else { return }
        idle.start { [unowned idle] in
            if !action() { idle.stop() }
        }
    }

    public func close() { idle.close() }
}
