import AdLoaderModel
import AdLoaderTime
package import AdLoaderWire
import Glibc

extension RawConnection {
    /// Reads exactly `count` raw bytes (before any frame), or fewer when the peer closes.
    package func readRaw(_ count: Int) throws(CheckFailure) -> [UInt8] {
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
    package func handshake() throws(CheckFailure) {
        try sendPreface()
        guard try readServerPreface(until: ContinuousClock.now + timeout) else {
            throw CheckFailure("connection closed by the server before its preface")
        }
    }

    /// Records that the server's preface was read with ``readRaw(_:)``; frames follow.
    package func markPrefaceConsumed() {
        prefaceConsumed = true
        if !raw.isEmpty {
            decoder.append(raw)
            raw.removeAll()
        }
    }

    /// Reads and checks the server's 12-byte preface, unless already done.
    /// - Returns: false when the server closed the connection without sending a byte.
    /// - Throws: on timeout, on other bytes, or on a close inside the preface.
    private func readServerPreface(until deadline: ContinuousClock.Instant) throws(CheckFailure) -> Bool {
        guard !prefaceConsumed else { return true }
        while raw.count < ProtocolPreface.count && !peerClosed {
            guard try readSome(until: deadline, into: .raw) else {
                throw CheckFailure("no server preface within \(timeout) (\(raw.count) of 12 bytes)")
            }
        }
        if raw.isEmpty && peerClosed { return false }
        let answer = Array(raw.prefix(ProtocolPreface.count))
        guard answer == ProtocolPreface.bytes else {
            throw CheckFailure("server preface: expected \(hex(ProtocolPreface.bytes)), got \(hex(answer))")
        }
        raw.removeFirst(ProtocolPreface.count)
        markPrefaceConsumed()
        return true
    }

    // MARK: Frames

    /// The next response frame, whatever its call, by `deadline`.
    /// - Throws: on timeout, on close, or on bytes that do not decode.
    package func nextFrame(until deadline: ContinuousClock.Instant) throws(CheckFailure) -> ResponseFrame {
        if !stash.isEmpty { return stash.removeFirst() }
        guard let frame = try readFrame(until: deadline, waiting: deadline - ContinuousClock.now) else {
            throw CheckFailure("connection closed by the server")
        }
        return frame
    }

    /// The next response frame, whatever its call, or nil once the server has closed the
    /// connection after its last whole frame. The server's preface is checked first if it
    /// was not yet.
    /// - Parameter timeout: how long to wait for the frame; nil for the connection's timeout.
    /// - Throws: on timeout, on a close inside a frame, or on bytes that do not decode.
    package func readFrame(timeout: Duration? = nil) throws(CheckFailure) -> ResponseFrame? {
        if !stash.isEmpty { return stash.removeFirst() }
        let wait = timeout ?? self.timeout
        return try readFrame(until: ContinuousClock.now + wait, waiting: wait)
    }

    /// Reads frames until the server closes the connection, each within `timeout`.
    /// - Returns: the frames, in order (an empty list when the server closed without one).
    /// - Throws: when no frame or close comes within `timeout`, or as ``readFrame(timeout:)``.
    package func readUntilClosed(timeout: Duration? = nil) throws(CheckFailure) -> [ResponseFrame] {
        var frames: [ResponseFrame] = []
        while let frame = try readFrame(timeout: timeout) { frames.append(frame) }
        return frames
    }

    /// A frame from the socket (not the stash), or nil when the server closed between frames.
    /// - Parameter waiting: the wait up to `deadline`, for the timeout's message.
    private func readFrame(
        until deadline: ContinuousClock.Instant, waiting: Duration
    ) throws(CheckFailure) -> ResponseFrame? {
        guard try readServerPreface(until: deadline) else { return nil }
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
                guard decoder.bufferedByteCount == 0 else {
                    throw CheckFailure("connection closed by the server inside a frame")
                }
                return nil
            }
            guard try readSome(until: deadline, into: .decoder) else {
                throw CheckFailure("no answer within \(waiting)")
            }
        }
    }

    /// Waits for the end of call `callID`, collecting its messages; frames of other calls are
    /// kept for later (``takeStashed(for:)``, ``nextFrame(until:)``, ``readFrame(timeout:)``).
    /// - Parameter timeout: the bound of the whole wait; nil for the connection's timeout.
    /// - Throws: on timeout, or when the server closes first.
    package func awaitEnd(of callID: UInt64, timeout: Duration? = nil) throws(CheckFailure) -> CallResult {
        let wait = timeout ?? self.timeout
        let deadline = ContinuousClock.now + wait
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
                guard let next = try readFrame(until: deadline, waiting: wait) else {
                    throw CheckFailure("connection closed by the server before call \(callID) ended")
                }
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
    package func call(
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

    /// A unary call of `request`: sends it and waits for its end, whatever the status.
    package func call(
        _ method: String, _ request: some WireMessage, timeoutMilliseconds: UInt32 = 0
    ) throws(CheckFailure) -> CallResult {
        try awaitEnd(of: try start(method, request, timeoutMilliseconds: timeoutMilliseconds))
    }

    /// A unary call expected to succeed, its answer decoded as `Response`.
    /// - Throws: when the status is not OK or the answer does not decode.
    package func call<Response: WireMessage>(
        _ method: String, _ request: some WireMessage, as: Response.Type, timeoutMilliseconds: UInt32 = 0
    ) throws(CheckFailure) -> Response {
        let result = try call(method, request, timeoutMilliseconds: timeoutMilliseconds)
        guard result.status.isOK else { throw CheckFailure("\(method) answered \(result.status)") }
        guard result.messages.count == 1 else {
            throw CheckFailure("\(method) answered OK with \(result.messages.count) messages")
        }
        do {
            return try Response(decoding: result.messages[0])
        } catch {
            throw CheckFailure("\(method) answered a message that does not decode: \(error)")
        }
    }

    /// Keeps `frame` for a later ``awaitEnd(of:timeout:)`` or ``nextFrame(until:)``.
    package func stash(_ frame: ResponseFrame) {
        stash.append(frame)
    }

    /// Starts a unary call with a chosen id (e.g. a reused one) and waits for its end.
    package func awaitEndOfNewCall(
        id: UInt64, _ method: String, _ message: [UInt8]
    ) throws(CheckFailure) -> CallResult {
        try send([RequestFrame(callID: id, method: method, message: message)])
        return try awaitEnd(of: id)
    }

    /// Frames kept for later that belong to `callID`, removed from the stash.
    package func takeStashed(for callID: UInt64) -> [ResponseFrame] {
        let mine = stash.filter { $0.callID == callID }
        stash.removeAll { $0.callID == callID }
        return mine
    }

    /// Call ids of every frame kept for later.
    package var stashedCallIDs: [UInt64] { stash.map(\.callID) }

    /// Reads until the server closes the connection or `timeout` passes, returning the frames
    /// it sent meanwhile and whether it closed.
    package func observe(timeout: Duration? = nil) -> Observation {
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
    package struct Observation {
        package var frames: [ResponseFrame]
        package var closed: Bool
        /// The server's 12-byte preface came first (always true after a handshake).
        package var prefaceSeen: Bool
        /// Bytes after the last whole frame.
        package var undecodableBytes: Int

        /// E.g. "preface, call 0 RESOURCE_EXHAUSTED: message ..., then close".
        package var summary: String {
            var parts: [String] = []
            if prefaceSeen { parts.append("preface") }
            parts += frames.map { "call \($0.callID) \($0.end ? "\($0.status)" : "message")" }
            if undecodableBytes > 0 { parts.append("\(undecodableBytes) undecodable bytes") }
            if parts.isEmpty { parts.append("nothing") }
            return parts.joined(separator: ", ") + (closed ? ", then close" : ", connection left open")
        }
    }

    enum Sink { case raw, decoder }

    /// One read into `sink`; false when the deadline passed first. Sets `peerClosed` on EOF.
    func readSome(until deadline: ContinuousClock.Instant, into sink: Sink) throws(CheckFailure) -> Bool {
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
}
