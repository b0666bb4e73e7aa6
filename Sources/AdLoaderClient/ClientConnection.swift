import AdLoaderWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to an adloaderd: a socket, one reader thread, and a table of the calls in
/// flight, matched to the answers by call id in whatever order they arrive.
///
/// Threads: any task may start, cancel or expire calls (all state is behind `state`); frames
/// are written whole under `writeLock`; the reader thread alone reads the socket and closes it.
final class ClientConnection: Sendable {
    /// The waiter of one call.
    enum Waiter: Sendable {
        case unary(CheckedContinuation<ResponseFrame, any Error>)
        case stream(AsyncThrowingStream<ResponseFrame, any Error>.Continuation)
    }

    struct State: Sendable {
        var nextCallID: UInt64 = 0
        var pending: [UInt64: Waiter] = [:]
        /// Calls given up locally (cancelled, expired) whose answer may still arrive: dropped.
        var abandoned: Set<UInt64> = []
        /// Calls cancelled before they were registered.
        var cancelledEarly: Set<UInt64> = []
        /// Set once the connection is unusable; every later call fails with it.
        var closedStatus: Status? = nil
        /// The last connection-level (call id 0) status the server sent.
        var serverStatus: Status? = nil
        /// The server announced it is going away (a call-0 error status): no new calls; the
        /// connection closes once the calls in flight have their answers.
        var closeWhenIdle = false
    }

    let state = Locked(State())
    /// Guards the descriptor: writers hold it while sending; `fdOpen` turns false under it
    /// before `close`, so no write can reach a reused descriptor.
    private let writeLock = Locked(true)
    private let fd: Int32
    let maximumMessageSize: Int
    /// TLS over the socket, nil for cleartext: writers seal frames into records under
    /// `writeLock`; the reader thread opens what it receives.
    let tls: TLSClientSession?

    init(fd: Int32, maximumMessageSize: Int, tls: TLSClientSession? = nil) {
        self.fd = fd
        self.maximumMessageSize = maximumMessageSize
        self.tls = tls
    }

    /// Sends the preface and starts the reader thread.
    func start() throws(Status) {
        guard write(ProtocolPreface.bytes) else {
            closeSocket()
            throw Status(code: .unavailable, message: "connection closed while sending the preface")
        }
        let thread = Thread { [self] in readLoop() }
        thread.name = "adloader-client-reader"
        thread.start()
    }

    // MARK: - Calls

    func makeCallID() -> UInt64 {
        state.withLock { s in
            s.nextCallID &+= 1
            if s.nextCallID == 0 { s.nextCallID = 1 }
            return s.nextCallID
        }
    }

    /// Registers `waiter` for `callID` and sends `frame`; on failure the waiter is failed.
    func start(callID: UInt64, frame: RequestFrame, waiter: Waiter) {
        let refusal: (any Error)? = state.withLock { s in
            if s.cancelledEarly.remove(callID) != nil { return CancellationError() }
            if let closed = s.closedStatus { return closed }
            s.pending[callID] = waiter
            return nil
        }
        if let refusal {
            Self.fail(waiter, refusal)
            return
        }
        var bytes: [UInt8] = []
        frame.appendFrame(to: &bytes)
        if !write(bytes) {
            // The server has gone. The reader thread, woken, fails this call (registered above)
            // with the reason: what is still in the receive buffer (a TLS alert such as
            // "certificate required", a connection-level status) comes before the end.
            shutdownSocket()
        }
    }

    /// Gives up call `callID` locally: its waiter gets `error` now, the server is told to
    /// cancel it, and its later frames are dropped.
    /// - Parameter beforeStart: when the call is not registered yet, remember the cancellation
    ///   so that ``start(callID:frame:waiter:)`` refuses it (task cancellation can come first).
    func abandon(callID: UInt64, error: any Error, beforeStart: Bool = true) {
        let waiter: Waiter? = state.withLock { s in
            guard let waiter = s.pending.removeValue(forKey: callID) else {
                if beforeStart && !s.abandoned.contains(callID) { s.cancelledEarly.insert(callID) }
                return nil
            }
            s.abandoned.insert(callID)
            return waiter
        }
        guard let waiter else { return }
        Self.fail(waiter, error)
        var bytes: [UInt8] = []
        RequestFrame.cancel(callID: callID).appendFrame(to: &bytes)
        _ = write(bytes)
    }

    /// Forgets an early cancellation that will never be consumed (the call never started).
    func forgetEarlyCancel(callID: UInt64) {
        _ = state.withLock { $0.cancelledEarly.remove(callID) }
    }

    private func finish(callID: UInt64, error: any Error) {
        let waiter = state.withLock { $0.pending.removeValue(forKey: callID) }
        if let waiter { Self.fail(waiter, error) }
    }

    private static func fail(_ waiter: Waiter, _ error: any Error) {
        switch waiter {
        case .unary(let continuation): continuation.resume(throwing: error)
        case .stream(let continuation): continuation.finish(throwing: error)
        }
    }

    // MARK: - Socket

    private func write(_ bytes: [UInt8]) -> Bool {
        writeLock.withLock { open in
            guard open else { return false }
            guard let tls else { return bytes.withUnsafeBytes { Socket.sendAll(fd, $0) } }
            // Sealed and sent under the one lock: records reach the socket in the order made.
            guard let records = tls.seal(bytes) else { return false }
            return records.withUnsafeBytes { Socket.sendAll(fd, $0) }
        }
    }

    /// Sends the records OpenSSL wrote while reading (a TLS reply), in order with the writers'.
    private func flushTLSReply() {
        writeLock.withLock { open in
            guard open, let tls else { return }
            let records = tls.takeOutput()
            if !records.isEmpty { _ = records.withUnsafeBytes { Socket.sendAll(fd, $0) } }
        }
    }

    /// Stops the connection: every call in flight fails with UNAVAILABLE.
    func close() {
        state.withLock { s in
            if s.closedStatus == nil {
                s.closedStatus = Status(code: .unavailable, message: "connection closed by the client")
            }
        }
        shutdownSocket()
    }

    private func shutdownSocket() {
        writeLock.withLock { open in
            // Wakes the reader thread, which closes the descriptor.
            if open { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func closeSocket() {
        writeLock.withLock { open in
            if open {
                open = false
                Glibc.close(fd)
            }
        }
    }

    private func readLoop() {
        var decoder = FrameDecoder(maximumMessageSize: maximumMessageSize, expectingPreface: true)
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var reason = "connection closed by the server"
        reading: while true {
            let n = recv(fd, buffer.baseAddress, capacity, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                if n < 0 { reason = "connection error: \(String(cString: strerror(errno)))" }
                break
            }
            let received = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            if let tls {
                switch tls.open(received, into: { decoder.append($0) }) {
                case .more(let reply): if reply { flushTLSReply() }
                case .closed:
                    reason = "connection closed by the server (TLS close_notify)"
                    break reading
                case .failed(let error):
                    reason = "connection error (TLS): \(error)"
                    break reading
                }
            } else {
                decoder.append(received)
            }
            do {
                while let frame = try decoder.withNextMessage({ body in
                    Result { () throws(FrameError) in try ResponseFrame(decoding: body) }
                }) {
                    dispatch(try frame.get())
                }
            } catch {
                reason = "protocol error from the server: \(error)"
                break reading
            }
        }
        // Record why before closing the socket: a call sent meanwhile then gets this status
        // (its write no longer races the close and fails with a bare "connection closed").
        let (waiters, status): ([Waiter], Status) = state.withLock { s in
            var message = reason
            if let server = s.serverStatus { message += " (\(server))" }
            let status = s.closedStatus ?? Status(code: .unavailable, message: message)
            s.closedStatus = status
            let waiters = Array(s.pending.values)
            s.pending.removeAll()
            return (waiters, status)
        }
        closeSocket()
        for waiter in waiters { Self.fail(waiter, status) }
    }

    private func dispatch(_ frame: ResponseFrame) {
        if frame.callID == 0 {
            // A connection-level status: the server closes the connection after it, or (while
            // shutting down) answers every new call UNAVAILABLE until the client closes.
            let drained = state.withLock { s in
                s.serverStatus = frame.status
                guard frame.end, !frame.status.isOK else { return false }
                if s.closedStatus == nil {
                    s.closedStatus = Status(
                        code: .unavailable, message: "the server is closing the connection (\(frame.status))")
                }
                s.closeWhenIdle = true
                return s.pending.isEmpty
            }
            if drained { shutdownSocket() }
            return
        }
        var drained = false
        let waiter: Waiter? = state.withLock { s in
            if s.abandoned.contains(frame.callID) {
                if frame.end { s.abandoned.remove(frame.callID) }
                return nil
            }
            let waiter = frame.end ? s.pending.removeValue(forKey: frame.callID) : s.pending[frame.callID]
            drained = s.closeWhenIdle && s.pending.isEmpty
            return waiter
        }
        defer { if drained { shutdownSocket() } }
        switch waiter {
        case .unary(let continuation):
            // A unary call gets exactly one frame, with end set.
            if frame.end { continuation.resume(returning: frame) }
        case .stream(let continuation):
            continuation.yield(frame)
            if frame.end { continuation.finish() }
        case nil:
            break
        }
    }
}
