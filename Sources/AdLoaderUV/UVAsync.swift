internal import CLibUV

/// A `uv_async_t`: wakes the loop from another thread and runs an action on the loop.
///
/// ``sender`` is the only part other threads may use. Several sends before the loop runs the
/// action may be coalesced into one call (libuv), so the action drains whatever is waiting.
///
/// - Important: loop-confined except ``sender``. Close it with ``close()`` once no thread
///   sends any more: a send after the close is undefined behaviour (libuv).
public final class UVAsync: UVHandle {
    /// Wakes the loop from any thread.
    ///
    /// `@unchecked Sendable`: it holds only the handle's address, and `uv_async_send` is the
    /// one libuv call that is safe from any thread; the owner guarantees that no thread sends
    /// after ``UVAsync/close()`` (see there).
    public struct Sender: @unchecked Sendable {
        fileprivate let handle: UnsafeMutablePointer<uv_async_t>

        /// Makes the loop run the action soon (at most once for several sends).
        public func send() { _ = uv_async_send(handle) }
    }

    private var onWake: (() -> Void)?

    /// - Throws: ``UVError`` when `uv_async_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_async_t>.size)
        try register(uv_async_init(loop.raw, pointer(as: uv_async_t.self), uvAsyncTrampoline), "uv_async_init")
    }

    /// What runs on the loop after a send; replaces the previous action.
    public func setAction(_ action: @escaping () -> Void) { onWake = action }

    /// The thread-safe way to wake this handle.
    public var sender: Sender { Sender(handle: pointer(as: uv_async_t.self)) }

    public override func didClose() { onWake = nil }

    fileprivate func wake() { onWake?() }
}

private func uvAsyncTrampoline(_ handle: UnsafeMutablePointer<uv_async_t>?) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVAsync.self)?.wake()
}
