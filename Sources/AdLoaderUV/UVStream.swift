internal import CLibUV

/// The stream half of a TCP or pipe handle: listen, accept, read, write.
///
/// Reads land in the loop's shared buffer and are handed to the read callback, which must
/// consume them before returning. Writes go out with ``tryWrite(_:)`` first; only what the
/// kernel did not take is copied into a ``UVWriteRequest`` that owns its bytes.
///
/// - Important: loop-confined. Subclassed only by ``UVTCPHandle`` and ``UVPipeHandle``.
public class UVStream: UVHandle {
    // Stored properties are `@exclusivity(unchecked)`: loop-confined, and no method holds an
    // access across a call out of the stream. The framed transport reads `queuedWriteBytes`
    // once per request frame; its dynamic exclusivity check was ~1 % of the daemon's
    // instructions under pipelined load (callgrind).
    @exclusivity(unchecked) private var onRead: ((Result<UnsafeRawBufferPointer, UVError>) -> Void)?
    @exclusivity(unchecked) private var onConnection: ((UVError?) -> Void)?
    /// Bytes handed to `uv_write` and not yet reported written.
    @exclusivity(unchecked) public private(set) var queuedWriteBytes = 0
    @exclusivity(unchecked) public private(set) var isReading = false
    /// The peer ended its sending side: a read reported end of stream.
    @exclusivity(unchecked) public private(set) var sawEndOfFile = false

    var streamPointer: UnsafeMutablePointer<uv_stream_t> { pointer(as: uv_stream_t.self) }

    /// The peer's bytes the kernel holds that no read has taken yet (false when unknown or
    /// closing). A loop that ran late runs its timers before it reads: a timeout that finds
    /// unread bytes was caused by the loop, not the peer.
    public var hasUnreadInput: Bool { !isClosing && clibuv_unread_bytes(streamPointer) > 0 }

    /// Starts listening; `action` runs once per incoming connection (or error).
    /// - Throws: ``UVError`` when `uv_listen` fails.
    public func listen(backlog: Int32 = 511, _ action: @escaping (UVError?) -> Void) throws(UVError) {
        onConnection = action
        try uvCheck(uv_listen(streamPointer, backlog, uvConnectionTrampoline), "uv_listen")
    }

    /// Accepts a pending connection into `client`, a freshly initialized handle.
    /// - Throws: ``UVError`` when `uv_accept` fails.
    public func accept(into client: UVStream) throws(UVError) {
        try uvCheck(uv_accept(streamPointer, client.streamPointer), "uv_accept")
    }

    /// Starts reading; `action` gets each chunk (valid only during the call) or the error
    /// that ended the stream (`isEndOfFile` for an orderly end).
    /// - Throws: ``UVError`` when `uv_read_start` fails.
    public func readStart(_ action: @escaping (Result<UnsafeRawBufferPointer, UVError>) -> Void) throws(UVError) {
        onRead = action
        try resumeReading()
    }

    /// Starts reading again with the action given to ``readStart(_:)``.
    public func resumeReading() throws(UVError) {
        guard !isReading, !isClosing else { return }
        try uvCheck(uv_read_start(streamPointer, uvAllocTrampoline, uvReadTrampoline), "uv_read_start")
        isReading = true
    }

    /// Stops reading until ``resumeReading()``.
    public func readStop() {
        guard isReading, !isClosing else { return }
        uv_read_stop(streamPointer)
        isReading = false
    }

    /// Writes what the socket takes right now, without queueing.
    /// - Returns: the bytes written; 0 when the socket would block or writes are queued.
    /// - Throws: ``UVError`` for a broken connection.
    public func tryWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) -> Int {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        if queuedWriteBytes > 0 { return 0 }  // keep order behind queued writes
        var buffer = uv_buf_init(
            UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), UInt32(clamping: bytes.count))
        let result = uv_try_write(streamPointer, &buffer, 1)
        if result == UV_EAGAIN.rawValue { return 0 }
        try uvCheck(result, "uv_try_write")
        return Int(result)
    }

    /// Queues a copy of `bytes`; `completion` runs once when written or failed
    /// (`UV_ECANCELED` when the handle closed first).
    /// - Throws: ``UVError`` when `uv_write` fails at once (`completion` is then not called).
    public func write(copying bytes: UnsafeRawBufferPointer, _ completion: @escaping (UVError?) -> Void) throws(UVError)
    {
        guard bytes.count > 0 else { return }
        let request = UVWriteRequest(copying: bytes, stream: self, completion: completion)
        let result = request.submit(to: streamPointer)
        if result < 0 {
            request.discard()
            throw UVError(code: result, operation: "uv_write")
        }
        queuedWriteBytes += bytes.count
    }

    func writeFinished(byteCount: Int) {
        queuedWriteBytes -= byteCount
    }

    public override func willClose() { isReading = false }

    public override func didClose() {
        onRead = nil
        onConnection = nil
    }

    fileprivate func deliverRead(_ result: Result<UnsafeRawBufferPointer, UVError>) {
        if case .failure(let error) = result, error.isEndOfFile { sawEndOfFile = true }
        onRead?(result)
    }
    fileprivate func deliverConnection(_ error: UVError?) { onConnection?(error) }
}

private func uvAllocTrampoline(
    _ handle: UnsafeMutablePointer<uv_handle_t>?, _ suggested: Int, _ buffer: UnsafeMutablePointer<uv_buf_t>?
) {
    guard let handle, let buffer, let loopData = handle.pointee.loop.pointee.data else { return }
    let loop = Unmanaged<UVLoop>.fromOpaque(loopData).takeUnretainedValue()
    buffer.pointee = uv_buf_init(
        loop.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(loop.readBuffer.count))
}

private func uvReadTrampoline(
    _ stream: UnsafeMutablePointer<uv_stream_t>?, _ count: Int, _ buffer: UnsafePointer<uv_buf_t>?
) {
    guard let owner = UVHandle.owner(UnsafeMutableRawPointer(stream), as: UVStream.self) else { return }
    if count > 0, let base = buffer?.pointee.base {
        owner.deliverRead(.success(UnsafeRawBufferPointer(start: base, count: count)))
    } else if count < 0 {
        owner.deliverRead(.failure(UVError(code: Int32(count), operation: "read")))
    }
}

private func uvConnectionTrampoline(_ server: UnsafeMutablePointer<uv_stream_t>?, _ status: Int32) {
    guard let owner = UVHandle.owner(UnsafeMutableRawPointer(server), as: UVStream.self) else { return }
    owner.deliverConnection(status < 0 ? UVError(code: status, operation: "connection") : nil)
}
