internal import CLibUV

/// A `uv_timer_t`: calls back once after a timeout, or repeatedly.
///
/// - Important: loop-confined. Close it with ``close()``; it stays alive until then.
public final class UVTimer: UVHandle {
    private var onFire: (() -> Void)?

    /// - Throws: ``UVError`` when `uv_timer_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_timer_t>.size)
        try register(uv_timer_init(loop.raw, pointer(as: uv_timer_t.self)), "uv_timer_init")
    }

    /// (Re)starts the timer.
    /// - Parameters:
    ///   - timeout: milliseconds from the loop's cached now.
    ///   - repeat: milliseconds between later firings; 0 fires once.
    ///   - action: what runs on each firing; replaces the previous action.
    public func start(timeout: UInt64, repeat: UInt64 = 0, _ action: @escaping () -> Void) {
        guard !isClosing else { return }
        onFire = action
        // uv_timer_start fails only for a closing handle or a nil callback.
        _ = uv_timer_start(pointer(as: uv_timer_t.self), uvTimerTrampoline, timeout, `repeat`)
    }

    public func stop() {
        guard !isClosing else { return }
        uv_timer_stop(pointer(as: uv_timer_t.self))
    }

    /// Keeps the loop from waiting on this timer alone (`uv_unref`).
    public func unref() { uv_unref(rawHandle) }

    public override func didClose() { onFire = nil }

    fileprivate func fire() { onFire?() }
}

private func uvTimerTrampoline(_ timer: UnsafeMutablePointer<uv_timer_t>?) {
    UVHandle.owner(UnsafeMutableRawPointer(timer), as: UVTimer.self)?.fire()
}
