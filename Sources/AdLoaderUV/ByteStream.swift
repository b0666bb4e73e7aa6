/// The byte stream under a connection of any transport: a libuv TCP or pipe handle in the
/// daemon (``UVStream``), an in-process pipe in tests.
///
/// - Important: loop-confined. The read action gets each chunk, valid only during the call,
///   or the error that ended the stream (``UVError/isEndOfFile`` for an orderly end).
public protocol ByteStream: AnyObject {
    /// Bytes handed to ``write(copying:_:)`` and not yet reported written.
    var queuedWriteBytes: Int { get }
    /// The peer ended its sending side.
    var sawEndOfFile: Bool { get }
    /// Bytes the peer sent that no read has delivered yet (in the kernel, or held back). The loop
    /// runs timers before it reads, so after a stall a timeout must not close for a silence
    /// these bytes already ended.
    var hasUnreadInput: Bool { get }
    func readStart(_ action: @escaping (Result<UnsafeRawBufferPointer, UVError>) -> Void) throws(UVError)
    func resumeReading() throws(UVError)
    func readStop()
    /// Writes what the peer takes right now; returns the count written.
    func tryWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) -> Int
    /// Copies `bytes` and writes them in the background; `completion` runs once.
    func write(copying bytes: UnsafeRawBufferPointer, _ completion: @escaping (UVError?) -> Void) throws(UVError)
    func close()
}

extension ByteStream {
    /// Writes `bytes`: what the peer takes right now, the rest copied and queued, with the
    /// completion `makeCompletion` builds (called only when something is queued, so a write
    /// taken whole allocates nothing).
    /// - Returns: the error that failed the write, or nil.
    @inlinable
    public func writeNowOrQueue(
        _ bytes: UnsafeRawBufferPointer, makeCompletion: () -> (UVError?) -> Void
    ) -> UVError? {
        do throws(UVError) {
            let written = try tryWrite(bytes)
            if written < bytes.count {
                try write(copying: UnsafeRawBufferPointer(rebasing: bytes[written...]), makeCompletion())
            }
            return nil
        } catch {
            return error
        }
    }
}

extension UVStream: ByteStream {}

/// Takes freshly accepted byte streams: a transport, or the piece that tells transports apart
/// by a connection's first bytes.
///
/// - Important: loop-confined.
public protocol ByteStreamAcceptor: AnyObject {
    /// Serves `stream`, or refuses and closes it.
    /// - Parameter peer: how the logs name the client ("127.0.0.1:5000", "unix").
    func accept(_ stream: any ByteStream, peer: String)
}
