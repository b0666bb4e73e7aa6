internal import CLibUV

/// The owner of one `uv_loop_t`: runs it, stops it, and closes it at the end.
///
/// The loop's `data` points (unretained) at this object so handles reach shared per-loop
/// state such as the read buffer.
///
/// - Important: not thread-safe; every handle on the loop and every call here happens on
///   the thread that calls ``run()``.
public final class UVLoop {
    let raw: UnsafeMutablePointer<uv_loop_t>
    /// One read buffer for every stream on this loop: a read callback consumes its bytes
    /// before libuv asks for the next buffer, so one suffices on a single-threaded loop.
    public let readBuffer: UnsafeMutableRawBufferPointer
    private var isClosed = false

    /// - Parameter readBufferSize: bytes handed to each `uv_read` call.
    /// - Throws: ``UVError`` when `uv_loop_init` fails.
    public init(readBufferSize: Int = 64 * 1024) throws(UVError) {
        raw = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        do {
            try uvCheck(uv_loop_init(raw), "uv_loop_init")
        } catch {
            raw.deallocate()
            readBuffer.deallocate()
            isClosed = true
            throw error
        }
        raw.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        assert(isClosed, "UVLoop released without close()")
        if !isClosed { return }  // leak rather than free memory libuv may still use
        raw.deallocate()
        readBuffer.deallocate()
    }

    /// Runs until no active handle remains or ``stop()`` is called.
    /// - Returns: true when handles are still active (stopped early).
    @discardableResult
    public func run() -> Bool {
        uv_run(raw, UV_RUN_DEFAULT) != 0
    }

    /// Runs one iteration, waiting for I/O or the next timer if nothing is ready (a test
    /// drives the loop this way until the event it waits for; a timer bounds the wait).
    /// - Returns: true when handles are still active.
    @discardableResult
    public func runOnce() -> Bool {
        uv_run(raw, UV_RUN_ONCE) != 0
    }

    /// Runs one iteration without blocking; used to drain close callbacks.
    @discardableResult
    public func runNoWait() -> Bool {
        uv_run(raw, UV_RUN_NOWAIT) != 0
    }

    /// Makes ``run()`` return after the current iteration.
    public func stop() {
        uv_stop(raw)
    }

    /// The loop's cached monotonic time in milliseconds, updated once per iteration.
    public var now: UInt64 { uv_now(raw) }

    /// The monotonic clock in nanoseconds, read now (`uv_hrtime`, not cached): for measuring
    /// call latency and how late timers fire.
    public static var highResolutionNanoseconds: UInt64 { uv_hrtime() }

    /// Refreshes the cached time (after a long synchronous stretch).
    public func updateTime() {
        uv_update_time(raw)
    }

    /// Kinds of the handles still open (closing or not), for diagnostics.
    public var openHandleDescriptions: [String] {
        final class Collector { var names: [String] = [] }
        let collector = Collector()
        withExtendedLifetime(collector) {
            uv_walk(
                raw,
                { handle, arg in
                    guard let handle, let arg else { return }
                    let collector = Unmanaged<Collector>.fromOpaque(arg).takeUnretainedValue()
                    let name = String(cString: uv_handle_type_name(uv_handle_get_type(handle)))
                    collector.names.append(uv_is_closing(handle) != 0 ? "\(name) (closing)" : name)
                }, Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.names
    }

    /// Runs the loop without blocking until it has nothing left to do, at most `iterations`
    /// times, so that close callbacks run. A bounded replacement for `while runNoWait() {}`,
    /// which spins forever on a handle nobody closes.
    /// - Returns: true when the loop ran out of work.
    public func runUntilIdle(iterations: Int = 1_000) -> Bool {
        for _ in 0..<iterations where !runNoWait() { return true }
        return false
    }

    /// Closes every handle still open and not closing — through its owner when it has one
    /// (so retains and memory are released), else directly — and runs the close callbacks.
    /// The last resort of a shutdown: a handle found here was not closed by its owner.
    /// - Returns: the kinds of the handles it had to close (empty when none).
    public func closeRemainingHandles() -> [String] {
        final class Collector { var names: [String] = [] }
        let collector = Collector()
        withExtendedLifetime(collector) {
            uv_walk(
                raw,
                { handle, arg in
                    guard let handle, let arg, uv_is_closing(handle) == 0 else { return }
                    let collector = Unmanaged<Collector>.fromOpaque(arg).takeUnretainedValue()
                    collector.names.append(String(cString: uv_handle_type_name(uv_handle_get_type(handle))))
                    if let owner = UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVHandle.self) {
                        owner.close()
                    } else {
                        uv_close(handle, nil)
                    }
                }, Unmanaged.passUnretained(collector).toOpaque())
        }
        _ = runUntilIdle()
        return collector.names
    }

    /// Closes the loop; every handle must have been closed and its close callback run.
    /// - Throws: ``UVError`` (`EBUSY`) when handles are still open; the loop stays usable.
    public func close() throws(UVError) {
        guard !isClosed else { return }
        try uvCheck(uv_loop_close(raw), "uv_loop_close")
        isClosed = true
    }
}
