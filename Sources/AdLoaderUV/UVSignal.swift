internal import CLibUV

#if canImport(Glibc)
    import Glibc
#endif

/// A `uv_signal_t`: delivers a signal as a loop callback.
///
/// - Important: loop-confined. A process started with SIGTERM/SIGINT blocked (as children
///   of test runners are) never sees them: call ``unblockTerminationSignals()`` first.
public final class UVSignal: UVHandle {
    private var onSignal: ((Int32) -> Void)?

    /// - Throws: ``UVError`` when `uv_signal_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_signal_t>.size)
        try register(uv_signal_init(loop.raw, pointer(as: uv_signal_t.self)), "uv_signal_init")
    }

    /// Starts watching `signal`.
    /// - Throws: ``UVError`` when `uv_signal_start` fails.
    public func start(_ signal: Int32, _ action: @escaping (Int32) -> Void) throws(UVError) {
        onSignal = action
        try uvCheck(uv_signal_start(pointer(as: uv_signal_t.self), uvSignalTrampoline, signal), "uv_signal_start")
    }

    public override func didClose() { onSignal = nil }

    fileprivate func deliver(_ signal: Int32) { onSignal?(signal) }

    /// Unblocks SIGTERM, SIGINT and SIGHUP for this thread (inherited masks would swallow them).
    public static func unblockTerminationSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

private func uvSignalTrampoline(_ handle: UnsafeMutablePointer<uv_signal_t>?, _ signal: Int32) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVSignal.self)?.deliver(signal)
}
