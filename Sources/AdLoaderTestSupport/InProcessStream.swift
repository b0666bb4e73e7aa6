public import AdLoaderFramed
public import AdLoaderUV

/// A ``FramedByteStream`` with a test as its peer: the in-process transport's socket.
///
/// What the server writes lands in ``received`` as long as the client's window has room
/// (``window``, unlimited by default); the rest waits in the stream's write queue, as in a
/// kernel socket whose peer does not read, until the test calls ``clientReads(upTo:)``. What
/// the test sends reaches the server's read action at once while it reads, and waits while
/// the server has paused reading.
///
/// - Important: single-threaded, like the loop it stands in for.
public final class InProcessStream: FramedByteStream {
    /// Bytes the client has received and not yet taken with ``takeReceived()``.
    public private(set) var received: [UInt8] = []
    /// Bytes the client's receive window still takes before writes queue; nil = unlimited.
    public var window: Int?
    public private(set) var isReading = false
    public private(set) var isClosed = false
    public private(set) var sawEndOfFile = false
    private var onRead: ((Result<UnsafeRawBufferPointer, UVError>) -> Void)?
    private var pendingInbound: [[UInt8]] = []
    private var pendingEndOfFile = false
    private var queued: [(bytes: [UInt8], completion: (UVError?) -> Void)] = []

    public init(window: Int? = nil) {
        self.window = window
    }

    public var queuedWriteBytes: Int { queued.reduce(0) { $0 + $1.bytes.count } }

    // MARK: The test's side

    /// The client sends `bytes`: delivered now while the server reads, else when it resumes.
    public func clientSends(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        if isReading, pendingInbound.isEmpty {
            deliver(bytes)
        } else {
            pendingInbound.append(bytes)
        }
    }

    /// The client sends `bytes` while the server's loop is busy: they wait unread, as in a kernel
    /// receive buffer, until ``loopPolls()`` (a loop that ran late fires its timers first).
    public func clientSendsDuringAStall(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        pendingInbound.append(bytes)
    }

    /// The loop reaches its poll phase: the server reads what waits, while it reads.
    public func loopPolls() { deliverPending() }

    public var hasUnreadInput: Bool { !pendingInbound.isEmpty }

    /// The client closes its sending side (the server reads end of stream).
    public func clientClosesSending() {
        guard !isClosed else { return }
        pendingEndOfFile = true
        deliverPending()
    }

    /// The client reads: the window grows by `count` (all when nil) and queued writes move into
    /// ``received`` as far as it goes, each completing when written whole.
    public func clientReads(upTo count: Int? = nil) {
        if let count, let current = window { window = current + count } else if count == nil { window = nil }
        while let first = queued.first, !isClosed {
            let room = window ?? Int.max
            guard room > 0 else { return }
            let taken = min(room, first.bytes.count)
            received.append(contentsOf: first.bytes[..<taken])
            if let current = window { window = current - taken }
            if taken == first.bytes.count {
                queued.removeFirst()
                first.completion(nil)
            } else {
                queued[0].bytes.removeFirst(taken)
            }
        }
    }

    /// Takes what was received so far.
    public func takeReceived() -> [UInt8] {
        defer { received.removeAll() }
        return received
    }

    // MARK: FramedByteStream

    public func readStart(_ action: @escaping (Result<UnsafeRawBufferPointer, UVError>) -> Void) throws(UVError) {
        onRead = action
        try resumeReading()
    }

    public func resumeReading() throws(UVError) {
        guard !isReading, !isClosed else { return }
        isReading = true
        deliverPending()
    }

    public func readStop() { isReading = false }

    public func tryWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) -> Int {
        guard !isClosed else { throw UVError(code: UVError.brokenPipeCode, operation: "in-process write") }
        guard queued.isEmpty else { return 0 }
        let taken = min(window ?? Int.max, bytes.count)
        received.append(contentsOf: bytes[..<taken])
        if let current = window { window = current - taken }
        return taken
    }

    public func write(copying bytes: UnsafeRawBufferPointer, _ completion: @escaping (UVError?) -> Void) throws(UVError)
    {
        guard !isClosed else { throw UVError(code: UVError.brokenPipeCode, operation: "in-process write") }
        queued.append((Array(bytes), completion))
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        // As libuv does: queued writes end with ECANCELED.
        let cancelled = queued
        queued.removeAll()
        for write in cancelled { write.completion(UVError(code: UVError.cancelledCode, operation: "in-process write")) }
    }

    private func deliver(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { onRead?(.success($0)) }
    }

    private func deliverPending() {
        while isReading, !isClosed, !pendingInbound.isEmpty {
            deliver(pendingInbound.removeFirst())
        }
        if isReading, !isClosed, pendingInbound.isEmpty, pendingEndOfFile {
            pendingEndOfFile = false
            sawEndOfFile = true
            onRead?(.failure(UVError(code: UVError.endOfFileCode, operation: "in-process read")))
        }
    }
}
