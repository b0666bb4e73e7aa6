internal import CLibUV

/// A `uv_idle_t`: while started, runs a callback once per loop iteration and keeps the loop
/// from blocking in its poll (every poll then has a zero timeout). For work that must run
/// before the loop sleeps without forcing that, use ``UVPrepare``.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
public final class UVIdle: UVHandle {
    private var onIdle: (() -> Void)?
    public private(set) var isActive = false

    /// - Throws: ``UVError`` when `uv_idle_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_idle_t>.size)
        try register(uv_idle_init(loop.raw, pointer(as: uv_idle_t.self)), "uv_idle_init")
    }

    /// Starts calling `action` once per iteration (replacing an earlier action).
    public func start(_ action: @escaping () -> Void) {
        onIdle = action
        guard !isActive, !isClosing else { return }
        _ = uv_idle_start(pointer(as: uv_idle_t.self), uvIdleTrampoline)
        isActive = true
    }

    public func stop() {
        guard isActive, !isClosing else { return }
        uv_idle_stop(pointer(as: uv_idle_t.self))
        isActive = false
    }

    public override func willClose() { isActive = false }

    public override func didClose() { onIdle = nil }

    fileprivate func fire() { onIdle?() }
}

private func uvIdleTrampoline(_ handle: UnsafeMutablePointer<uv_idle_t>?) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVIdle.self)?.fire()
}
