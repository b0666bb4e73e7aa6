internal import CLibUV

/// A `uv_prepare_t`: while started, runs a callback once per loop iteration, right before the
/// loop polls for I/O (redis's `beforeSleep`): the place for work that batches what the
/// iteration's callbacks produced. Unlike ``UVIdle`` it does not stop the poll from blocking.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
public final class UVPrepare: UVHandle {
    private var onPrepare: (() -> Void)?
    public private(set) var isActive = false

    /// - Throws: ``UVError`` when `uv_prepare_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_prepare_t>.size)
        try register(uv_prepare_init(loop.raw, pointer(as: uv_prepare_t.self)), "uv_prepare_init")
    }

    /// Starts calling `action` before every poll (replacing an earlier action).
    public func start(_ action: @escaping () -> Void) {
        onPrepare = action
        guard !isActive, !isClosing else { return }
        _ = uv_prepare_start(pointer(as: uv_prepare_t.self), uvPrepareTrampoline)
        isActive = true
    }

    public func stop() {
        guard isActive, !isClosing else { return }
        uv_prepare_stop(pointer(as: uv_prepare_t.self))
        isActive = false
    }

    public override func willClose() { isActive = false }

    public override func didClose() { onPrepare = nil }

    fileprivate func fire() { onPrepare?() }
}

private func uvPrepareTrampoline(_ handle: UnsafeMutablePointer<uv_prepare_t>?) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVPrepare.self)?.fire()
}
