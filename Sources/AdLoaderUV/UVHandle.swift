internal import CLibUV

/// The base of every libuv handle owner: allocates the `uv_*_t`, keeps itself alive through
/// the handle's `data` while libuv may call back, and frees the memory in the close callback.
///
/// Subclasses call ``register(_:_:)`` with their `uv_*_init` result right after
/// `super.init`. From then on the handle lives until ``close()``'s callback has run.
///
/// - Important: loop-confined; not `Sendable`.
public class UVHandle {
    public let loop: UVLoop
    let rawHandle: UnsafeMutablePointer<uv_handle_t>
    private let memory: UnsafeMutableRawPointer
    // Stored properties are `@exclusivity(unchecked)`: loop-confined, and no method holds an
    // access across a call out of the handle (`onClose` is read, cleared, then called).
    @exclusivity(unchecked) private var state: State = .unregistered
    /// Called once, from the close callback, after the handle is closed.
    @exclusivity(unchecked) public var onClose: (() -> Void)?

    private enum State { case unregistered, open, closing, closed }

    public init(loop: UVLoop, byteCount: Int) {
        self.loop = loop
        memory = .allocate(byteCount: byteCount, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        rawHandle = memory.bindMemory(to: uv_handle_t.self, capacity: 1)
    }

    deinit {
        assert(state == .closed, "libuv handle released without close()")
    }

    /// Takes the result of the subclass's `uv_*_init`: on success the handle holds a retain
    /// of `self` in `data`; on failure the memory is freed at once (libuv never saw it).
    /// - Throws: ``UVError`` when `result` is negative.
    public func register(_ result: Int32, _ operation: String) throws(UVError) {
        precondition(state == .unregistered)
        if result < 0 {
            state = .closed
            memory.deallocate()
            throw UVError(code: result, operation: operation)
        }
        rawHandle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        state = .open
    }

    /// The handle as a pointer to its concrete libuv type.
    public func pointer<T>(as type: T.Type) -> UnsafeMutablePointer<T> {
        UnsafeMutablePointer<T>(OpaquePointer(rawHandle))
    }

    public var isClosing: Bool { state == .closing || state == .closed }

    /// Starts closing; callbacks already queued may still run (reads stop at once, writes
    /// finish with `UV_ECANCELED`). Calling it twice is harmless.
    public func close() {
        guard state == .open, uv_is_closing(rawHandle) == 0 else { return }
        state = .closing
        willClose()
        uv_close(rawHandle, uvHandleCloseTrampoline)
    }

    /// Subclass hook, called by ``close()`` before `uv_close`.
    public func willClose() {}

    /// Subclass hook, called from the close callback; release stored callbacks here.
    public func didClose() {}

    fileprivate func finishClose() {
        state = .closed
        memory.deallocate()
        didClose()
        let onClose = self.onClose
        self.onClose = nil
        onClose?()
    }

    /// The owner of a handle, recovered unretained from its `data` inside a trampoline.
    public static func owner<H: UVHandle>(_ handle: UnsafeMutableRawPointer?, as type: H.Type) -> H? {
        guard let handle else { return nil }
        let raw = handle.assumingMemoryBound(to: uv_handle_t.self)
        guard let data = raw.pointee.data else { return nil }
        // Every trampoline is installed by an owner of exactly type H: no dynamic cast on the hot path.
        return unsafeDowncast(Unmanaged<UVHandle>.fromOpaque(data).takeUnretainedValue(), to: H.self)
    }
}

private func uvHandleCloseTrampoline(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let handle, let data = handle.pointee.data else { return }
    handle.pointee.data = nil
    // Balances the retain taken in register(_:_:).
    let owner = Unmanaged<UVHandle>.fromOpaque(data).takeRetainedValue()
    owner.finishClose()
}
