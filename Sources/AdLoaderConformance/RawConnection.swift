import AdLoaderCore
import AdLoaderWire
import Glibc

/// Why a check failed: what was expected and what happened instead.
struct CheckFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The result of one call: the messages it answered and its final status.
struct CallResult {
    var callID: UInt64
    var messages: [[UInt8]]
    var status: Status
}

/// A blocking-with-deadline TCP connection that speaks raw bytes and frames.
///
/// The socket is non-blocking and every operation polls with the time left before its
/// deadline, so a server that stops answering fails a check instead of hanging the suite.
/// Frames that arrive for other calls while one call is awaited are kept for later.
final class RawConnection {
    private var fd: Int32
    /// How long one operation (a read, a write, an awaited answer) may take.
    let timeout: Duration
    private var decoder = FrameDecoder(maximumMessageSize: 256 * 1024 * 1024)
    /// Raw bytes read before the preface was consumed.
    private var raw: [UInt8] = []
    private var prefaceConsumed = false
    /// Decoded frames not yet handed out, in arrival order.
    private var stash: [ResponseFrame] = []
    /// Set once the peer closed (EOF or reset).
    private(set) var peerClosed = false
    private var nextCallID: UInt64 = 1

    private init(fd: Int32, timeout: Duration) {
        self.fd = fd
        self.timeout = timeout
    }

    deinit {
        close()
    }

    /// Opens a TCP connection to `host:port` within `timeout`.
    /// - Parameter receiveBufferSize: when set, the socket's SO_RCVBUF (set before connecting).
    static func connect(
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

    /// A fresh call id, unique on this connection.
    func makeCallID() -> UInt64 {
        defer { nextCallID += 1 }
        return nextCallID
    }

    func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: Writing

    /// Writes all of `bytes` within the timeout.
    func send(_ bytes: [UInt8]) throws(CheckFailure) {
        try send(bytes, until: ContinuousClock.now + timeout)
    }

    /// Writes all of `bytes` by `deadline`.
    /// - Throws: when the peer closed or the deadline passed with bytes unwritten.
    func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) throws(CheckFailure) {
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

    /// Sends the 12-byte protocol preface.
    func sendPreface() throws(CheckFailure) {
        try send(ProtocolPreface.bytes)
    }

    /// Sends `frames`, each length-prefixed, in one write.
    func send(_ frames: [RequestFrame]) throws(CheckFailure) {
        var bytes: [UInt8] = []
        for frame in frames { frame.appendFrame(to: &bytes) }
        try send(bytes)
    }

    // MARK: Reading

    /// Reads exactly `count` raw bytes (before any frame), or fewer when the peer closes.
    func readRaw(_ count: Int) throws(CheckFailure) -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while raw.count < count && !peerClosed {
            guard try readSome(until: deadline, into: .raw) else {
                throw CheckFailure("timed out after \(timeout) with \(raw.count) of \(count) bytes read")
            }
        }
        let taken = Array(raw.prefix(count))
        raw.removeFirst(taken.count)
        return taken
    }

    /// Sends the preface and checks the server answers with the same 12 bytes.
    func handshake() throws(CheckFailure) {
        try sendPreface()
        let answer = try readRaw(ProtocolPreface.count)
        guard answer == ProtocolPreface.bytes else {
            throw CheckFailure("server preface: expected \(hex(ProtocolPreface.bytes)), got \(hex(answer))")
        }
        markPrefaceConsumed()
    }

    /// The next response frame, whatever its call, by `deadline`.
    /// - Throws: on timeout, on close, or on bytes that do not decode.
    func nextFrame(until deadline: ContinuousClock.Instant) throws(CheckFailure) -> ResponseFrame {
        if !stash.isEmpty { return stash.removeFirst() }
        return try readFrame(until: deadline)
    }

    private func readFrame(until deadline: ContinuousClock.Instant) throws(CheckFailure) -> ResponseFrame {
        precondition(prefaceConsumed, "handshake first")
        while true {
            let body: [UInt8]?
            do {
                body = try decoder.next()
            } catch {
                throw CheckFailure("the server sent undecodable framing: \(error)")
            }
            if let body {
                do {
                    return try ResponseFrame(decoding: body)
                } catch {
                    throw CheckFailure("the server sent an undecodable ResponseFrame: \(error)")
                }
            }
            if peerClosed {
                throw CheckFailure(
                    decoder.bufferedByteCount > 0
                        ? "connection closed by the server inside a frame" : "connection closed by the server")
            }
            guard try readSome(until: deadline, into: .decoder) else {
                throw CheckFailure("no answer within \(timeout)")
            }
        }
    }

    /// Waits for the end of call `callID`, collecting its messages; frames of other calls are
    /// kept for later. Fails when a frame for `callID` arrives after its end was seen.
    func awaitEnd(of callID: UInt64, timeout: Duration? = nil) throws(CheckFailure) -> CallResult {
        let deadline = ContinuousClock.now + (timeout ?? self.timeout)
        var messages: [[UInt8]] = []
        var index = 0
        while true {
            let frame: ResponseFrame
            if index < stash.count {
                guard stash[index].callID == callID else {
                    index += 1
                    continue
                }
                frame = stash.remove(at: index)
            } else {
                let next = try readFrame(until: deadline)
                guard next.callID == callID else {
                    stash.append(next)
                    index = stash.count
                    continue
                }
                frame = next
            }
            if let message = frame.message { messages.append(message) }
            if frame.end { return CallResult(callID: callID, messages: messages, status: frame.status) }
        }
    }

    /// A unary call: sends the request and waits for its end.
    func call(
        _ method: String, _ message: [UInt8], timeoutMilliseconds: UInt32 = 0, metadata: [MetadataEntry] = []
    ) throws(CheckFailure) -> CallResult {
        let id = makeCallID()
        try send([
            RequestFrame(
                callID: id, method: method, timeoutMilliseconds: timeoutMilliseconds, metadata: metadata,
                message: message)
        ])
        return try awaitEnd(of: id)
    }

    /// Keeps `frame` for a later ``awaitEnd(of:timeout:)`` or ``nextFrame(until:)``.
    func stash(_ frame: ResponseFrame) {
        stash.append(frame)
    }

    /// Records that the server's preface was read with ``readRaw(_:)``; frames follow.
    func markPrefaceConsumed() {
        prefaceConsumed = true
        if !raw.isEmpty {
            decoder.append(raw)
            raw.removeAll()
        }
    }

    /// Starts a unary call with a chosen id (e.g. a reused one) and waits for its end.
    func awaitEndOfNewCall(id: UInt64, _ method: String, _ message: [UInt8]) throws(CheckFailure) -> CallResult {
        try send([RequestFrame(callID: id, method: method, message: message)])
        return try awaitEnd(of: id)
    }

    /// Frames kept for later that belong to `callID`, removed from the stash.
    func takeStashed(for callID: UInt64) -> [ResponseFrame] {
        let mine = stash.filter { $0.callID == callID }
        stash.removeAll { $0.callID == callID }
        return mine
    }

    /// Call ids of every frame kept for later.
    var stashedCallIDs: [UInt64] { stash.map(\.callID) }

    /// Reads until the server closes the connection or `timeout` passes, returning the frames
    /// it sent meanwhile and whether it closed.
    func observe(timeout: Duration? = nil) -> Observation {
        let deadline = ContinuousClock.now + (timeout ?? self.timeout)
        var frames = stash
        stash.removeAll()
        while !peerClosed {
            let progressed = (try? readSome(until: deadline, into: prefaceConsumed ? .decoder : .raw)) ?? false
            if !progressed { break }
        }
        var decoder = self.decoder
        var prefaceSeen = prefaceConsumed
        if !prefaceConsumed {
            // Without a handshake, a preface may come first; decode whatever follows it.
            decoder = FrameDecoder(maximumMessageSize: 256 * 1024 * 1024)
            var bytes = raw
            if bytes.starts(with: ProtocolPreface.bytes) {
                bytes.removeFirst(ProtocolPreface.count)
                prefaceSeen = true
            }
            decoder.append(bytes)
        }
        while let body = try? decoder.next(), let frame = try? ResponseFrame(decoding: body) {
            frames.append(frame)
        }
        return Observation(
            frames: frames, closed: peerClosed, prefaceSeen: prefaceSeen, undecodableBytes: decoder.bufferedByteCount)
    }

    /// What a server sent, and whether it closed, within a bounded wait.
    struct Observation {
        var frames: [ResponseFrame]
        var closed: Bool
        /// The server's 12-byte preface came first (always true after a handshake).
        var prefaceSeen: Bool
        /// Bytes after the last whole frame.
        var undecodableBytes: Int

        /// E.g. "preface, call 0 RESOURCE_EXHAUSTED: message ..., then close".
        var summary: String {
            var parts: [String] = []
            if prefaceSeen { parts.append("preface") }
            parts += frames.map { "call \($0.callID) \($0.end ? "\($0.status)" : "message")" }
            if undecodableBytes > 0 { parts.append("\(undecodableBytes) undecodable bytes") }
            if parts.isEmpty { parts.append("nothing") }
            return parts.joined(separator: ", ") + (closed ? ", then close" : ", connection left open")
        }
    }

    private enum Sink { case raw, decoder }

    /// One read into `sink`; false when the deadline passed first. Sets `peerClosed` on EOF.
    private func readSome(until deadline: ContinuousClock.Instant, into sink: Sink) throws(CheckFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                switch sink {
                case .raw: raw.append(contentsOf: chunk[0..<count])
                case .decoder: chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                return true
            }
            if count == 0 {
                peerClosed = true
                return true
            }
            let code = errno
            if code == ECONNRESET || code == EPIPE {
                peerClosed = true
                return true
            }
            guard code == EAGAIN || code == EWOULDBLOCK || code == EINTR else {
                throw CheckFailure("read failed: \(Self.errorString())")
            }
            guard try waitFor(Int16(POLLIN), until: deadline) else { return false }
        }
    }

    /// Polls for `events`; false when the deadline passed first.
    private func waitFor(_ events: Int16, until deadline: ContinuousClock.Instant) throws(CheckFailure) -> Bool {
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

    private static func errorString() -> String {
        String(cString: strerror(errno))
    }
}

/// Bytes as spaced hex, e.g. "41 44 4c", shortened after 32 bytes.
func hex(_ bytes: [UInt8]) -> String {
    let shown = bytes.prefix(32).map { byte -> String in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
    return shown.joined(separator: " ") + (bytes.count > 32 ? " ... (\(bytes.count) bytes)" : "")
}
