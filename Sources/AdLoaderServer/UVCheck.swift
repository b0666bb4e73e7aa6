import CLibUV

/// A `uv_check_t`: runs a callback once per loop iteration, right after I/O polling.
///
/// The server uses one to flush, once per iteration, the output of connections that got
/// answers outside their own read callback (timers, other connections' calls, Watch events).
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
final class UVCheck: UVHandle {
    private var onCheck: (() -> Void)?
    private(set) var isActive = false

    /// - Throws: ``UVError`` when `uv_check_init` fails.
    init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_check_t>.size)
        try register(uv_check_init(loop.raw, pointer(as: uv_check_t.self)), "uv_check_init")
    }

    /// Starts calling `action` once per iteration (replacing an earlier action).
    func start(_ action: @escaping () -> Void) {
        onCheck = action
        guard !isActive, !isClosing else { return }
        _ = uv_check_start(pointer(as: uv_check_t.self), uvCheckTrampoline)
        isActive = true
    }

    func stop() {
        guard isActive, !isClosing else { return }
        uv_check_stop(pointer(as: uv_check_t.self))
        isActive = false
    }

    override func willClose() { isActive = false }

    override func didClose() { onCheck = nil }

    fileprivate func fire() { onCheck?() }
}

private func uvCheckTrampoline(_ handle: UnsafeMutablePointer<uv_check_t>?) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVCheck.self)?.fire()
}
