internal import CLibUV

/// A `uv_poll_t`: watches a file descriptor someone else owns (a libcurl socket, say) for
/// readability and writability.
///
/// The descriptor must stay open until the poll is closed; the poll never closes it.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
public final class UVPoll: UVHandle {
    /// What to watch for, and what happened.
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let readable = Events(rawValue: Int32(UV_READABLE.rawValue))
        public static let writable = Events(rawValue: Int32(UV_WRITABLE.rawValue))
        public static let disconnect = Events(rawValue: Int32(UV_DISCONNECT.rawValue))
    }

    /// The watched descriptor.
    public let fileDescriptor: Int32
    private var onEvents: ((Result<Events, UVError>) -> Void)?

    /// - Throws: ``UVError`` when `uv_poll_init` fails (e.g. `EBADF`, or a regular file).
    public init(loop: UVLoop, fileDescriptor: Int32) throws(UVError) {
        self.fileDescriptor = fileDescriptor
        super.init(loop: loop, byteCount: MemoryLayout<uv_poll_t>.size)
        try register(uv_poll_init(loop.raw, pointer(as: uv_poll_t.self), fileDescriptor), "uv_poll_init")
    }

    /// Starts (or changes) watching `events`; `action` gets the events that happened, or the
    /// error that ended the watch. Replaces the previous action.
    /// - Throws: ``UVError`` when `uv_poll_start` fails.
    public func start(_ events: Events, _ action: @escaping (Result<Events, UVError>) -> Void) throws(UVError) {
        guard !isClosing else { return }
        onEvents = action
        try uvCheck(uv_poll_start(pointer(as: uv_poll_t.self), events.rawValue, uvPollTrampoline), "uv_poll_start")
    }

    public func stop() {
        guard !isClosing else { return }
        uv_poll_stop(pointer(as: uv_poll_t.self))
    }

    public override func didClose() { onEvents = nil }

    fileprivate func deliver(status: Int32, events: Int32) {
        onEvents?(
            status < 0 ? .failure(UVError(code: status, operation: "uv_poll")) : .success(Events(rawValue: events)))
    }
}

private func uvPollTrampoline(_ handle: UnsafeMutablePointer<uv_poll_t>?, _ status: Int32, _ events: Int32) {
    UVHandle.owner(UnsafeMutableRawPointer(handle), as: UVPoll.self)?.deliver(status: status, events: events)
}
