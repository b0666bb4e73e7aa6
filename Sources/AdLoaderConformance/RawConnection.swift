import AdLoaderModel
import AdLoaderTime
package import AdLoaderWire
import Glibc

/// The result of one call: the messages it answered and its final status.
package struct CallResult {
    package var callID: UInt64
    /// The `message` of every frame of the call, in order (a unary OK answer has one).
    package var messages: [[UInt8]]
    package var status: Status
}

/// A blocking-with-deadline connection (TCP or Unix socket) that speaks raw bytes and frames:
/// the one raw-frame client of the conformance suite and the end-to-end tests.
///
/// The socket is non-blocking and every operation polls with the time left before its
/// deadline, so a server that stops answering fails a check instead of hanging the suite.
/// Frames that arrive for other calls while one call is awaited are kept for later.
///
/// The server's 12-byte preface is read and checked by ``handshake()``, or, after only
/// ``sendPreface()`` (or nothing), by the first read of a frame; ``readRaw(_:)`` reads the
/// bytes before it as they are.
///
/// - Important: not thread-safe; one thread uses a connection at a time.
package final class RawConnection {
    var fd: Int32
    /// How long one operation (a read, a write, an awaited answer) may take.
    package let timeout: Duration
    var decoder = FrameDecoder(maximumMessageSize: 256 * 1024 * 1024)
    /// Raw bytes read before the preface was consumed.
    var raw: [UInt8] = []
    var prefaceConsumed = false
    /// Decoded frames not yet handed out, in arrival order.
    var stash: [ResponseFrame] = []
    /// Set once the peer closed (EOF or reset).
    package internal(set) var peerClosed = false
    private var nextCallID: UInt64 = 1

    private init(fd: Int32, timeout: Duration) {
        self.fd = fd
        self.timeout = timeout
    }

    deinit {
        close()
    }

    /// Opens a TCP connection to `host:port` within `timeout`; nothing is sent.
    /// - Parameters:
    ///   - timeout: the bound of this connect and of each later operation.
    ///   - receiveBufferSize: when set, the socket's SO_RCVBUF (set before connecting).
    /// - Throws: ``CheckFailure`` when the host does not resolve or no address accepts.
    package static func connect(
        host: String, port: Int, timeout: Duration, receiveBufferSize: Int32? = nil
    ) throws(CheckFailure) -> RawConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw CheckFailure("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address for \(host)"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            if fd < 0 {
                lastError = "socket: \(errorString())"
                continue
            }
            let connection = RawConnection(fd: fd, timeout: timeout)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if var size = receiveBufferSize {
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            do throws(CheckFailure) {
                try connection.finishConnect(ai.pointee.ai_addr, ai.pointee.ai_addrlen)
                return connection
            } catch {
                lastError = error.description
            }
        }
        throw CheckFailure("cannot connect to \(host):\(port): \(lastError)")
    }

    /// Opens a connection to the Unix stream socket at `path`; nothing is sent.
    /// - Parameter timeout: the bound of each later operation (a local connect does not wait).
    /// - Throws: ``CheckFailure`` when the path is too long or nothing listens there.
    package static func connect(unixPath path: String, timeout: Duration) throws(CheckFailure) -> RawConnection {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw CheckFailure("unix socket path of \(path.utf8.count) bytes is longer than \(capacity - 1)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (i, byte) in path.utf8.enumerated() { bytes[i] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CheckFailure("socket: \(errorString())") }
        let connection = RawConnection(fd: fd, timeout: timeout)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { throw CheckFailure("cannot connect to unix:\(path): \(errorString())") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return connection
    }

    private func finishConnect(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) throws(CheckFailure) {
        let rc = Glibc.connect(fd, address, length)
        if rc == 0 { return }
        guard errno == EINPROGRESS else { throw CheckFailure("connect: \(Self.errorString())") }
        let deadline = ContinuousClock.now + timeout
        guard try waitFor(Int16(POLLOUT), until: deadline) else {
            throw CheckFailure("connect timed out after \(timeout)")
        }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        if error != 0 { throw CheckFailure("connect: \(String(cString: strerror(error)))") }
    }

    /// A fresh call id, unique on this connection: 1, 2, 3...
    package func makeCallID() -> UInt64 {
        defer { nextCallID += 1 }
        return nextCallID
    }

    /// Closes the socket; later operations fail.
    package func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    /// Ends the connection in both directions (`shutdown(SHUT_RDWR)`), as a client that goes
    /// away; the descriptor stays open until ``close()``.
    package func disconnect() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Half-closes (`shutdown(SHUT_WR)`): no more requests, but answers can still be read.
    package func halfClose() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: Writing

    /// Writes all of `bytes` within the timeout.
    package func send(_ bytes: [UInt8]) throws(CheckFailure) {
        try send(bytes, until: ContinuousClock.now + timeout)
    }

    /// Writes all of `bytes` by `deadline`.
    /// - Throws: when the peer closed or the deadline passed with bytes unwritten.
    package func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) throws(CheckFailure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                // MSG_NOSIGNAL: a server that closed must fail the check, not kill us with SIGPIPE.
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR {
                guard try waitFor(Int16(POLLOUT), until: deadline) else {
                    throw CheckFailure("write blocked: \(offset) of \(bytes.count) bytes sent before the timeout")
                }
                continue
            }
            throw CheckFailure("write failed after \(offset) of \(bytes.count) bytes: \(Self.errorString())")
        }
    }

    /// Writes what the socket takes within `wait` (nothing when it stays full).
    /// - Returns: the number of bytes written, from the start of `bytes`.
    /// - Throws: when the write fails (the peer closed).
    package func sendSome(_ bytes: ArraySlice<UInt8>, wait: Duration = .milliseconds(20)) throws(CheckFailure) -> Int {
        guard !bytes.isEmpty else { return 0 }
        let deadline = ContinuousClock.now + wait
        while true {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written >= 0 { return written }
            let code = errno
            guard code == EAGAIN || code == EWOULDBLOCK || code == EINTR else {
                throw CheckFailure("write failed: \(Self.errorString())")
            }
            guard try waitFor(Int16(POLLOUT), until: deadline) else { return 0 }
        }
    }

    /// Sends the 12-byte protocol preface.
    package func sendPreface() throws(CheckFailure) {
        try send(ProtocolPreface.bytes)
    }

    /// Sends `frames`, each length-prefixed, in one write.
    package func send(_ frames: [RequestFrame]) throws(CheckFailure) {
        var bytes: [UInt8] = []
        for frame in frames { frame.appendFrame(to: &bytes) }
        try send(bytes)
    }

    /// Sends one length-prefixed frame, e.g. `.cancel(callID: 4)`.
    package func send(_ frame: RequestFrame) throws(CheckFailure) {
        try send([frame])
    }

    /// Starts a call of `method` with `request` and returns its id without waiting.
    /// - Parameters:
    ///   - callID: the id to use (e.g. one already in flight); nil for ``makeCallID()``.
    ///   - timeoutMilliseconds: the call's deadline; 0 for none.
    @discardableResult
    package func start(
        _ method: String, _ request: some WireMessage, callID: UInt64? = nil, timeoutMilliseconds: UInt32 = 0
    ) throws(CheckFailure) -> UInt64 {
        let id = callID ?? makeCallID()
        try send(RequestFrame(callID: id, method: method, request: request, timeoutMilliseconds: timeoutMilliseconds))
        return id
    }

    // MARK: Polling

    /// Polls for `events`; false when the deadline passed first.
    func waitFor(_ events: Int16, until deadline: ContinuousClock.Instant) throws(CheckFailure) -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            if left <= .zero { return false }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(clamping: max(1, left.milliseconds))
            let rc = poll(&descriptor, 1, milliseconds)
            if rc > 0 { return true }
            if rc < 0 && errno != EINTR { throw CheckFailure("poll failed: \(Self.errorString())") }
        }
    }

    static func errorString() -> String {
        String(cString: strerror(errno))
    }
}
