package import AdLoaderWire
internal import CNghttp2

/// A gRPC client connection for the conformance suite: an nghttp2 client session over a
/// ``RawConnection``'s socket (HTTP/2 with prior knowledge), blocking with deadlines. It makes
/// the same calls as the framed connection and reports them the same way (``CallResult``), so
/// the transport-neutral checks run unchanged over both transports.
///
/// - Important: not thread-safe; one thread uses a connection at a time.
package final class GRPCCallConnection: CallConnection {
    private final class Call {
        var request: [UInt8]
        var sent = 0
        var headers: [String: String] = [:]
        var data: [UInt8] = []
        var closed = false
        var resetCode: UInt32 = 0

        init(request: [UInt8]) { self.request = request }
    }

    private let socket: RawConnection
    private var session: OpaquePointer?
    private var calls: [Int32: Call] = [:]
    package var timeout: Duration { socket.timeout }

    /// Connects to `host:port` and starts the HTTP/2 session (the client preface and SETTINGS).
    package static func connect(host: String, port: Int, timeout: Duration) throws(CheckFailure) -> GRPCCallConnection {
        let connection = GRPCCallConnection(socket: try RawConnection.connect(host: host, port: port, timeout: timeout))
        try connection.start()
        return connection
    }

    private init(socket: RawConnection) { self.socket = socket }

    deinit { close() }

    package func close() {
        if let session { nghttp2_session_del(session) }
        session = nil
        socket.close()
    }

    private func start() throws(CheckFailure) {
        var created: OpaquePointer?
        guard nghttp2_session_callbacks_new(&created) == 0, let callbacks = created else {
            throw CheckFailure("nghttp2: cannot create callbacks")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            let me = Unmanaged<GRPCCallConnection>.fromOpaque(user).takeUnretainedValue()
            me.calls[frame.pointee.hd.stream_id]?.headers[
                String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)] =
                String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            guard let data, let user else { return 0 }
            let me = Unmanaged<GRPCCallConnection>.fromOpaque(user).takeUnretainedValue()
            me.calls[streamID]?.data.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, user in
            guard let user else { return 0 }
            let me = Unmanaged<GRPCCallConnection>.fromOpaque(user).takeUnretainedValue()
            me.calls[streamID]?.closed = true
            me.calls[streamID]?.resetCode = errorCode
            return 0
        }
        guard nghttp2_session_client_new(&session, callbacks, Unmanaged.passUnretained(self).toOpaque()) == 0,
            let session
        else {
            throw CheckFailure("nghttp2: cannot create a client session")
        }
        guard nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil, 0) == 0 else {
            throw CheckFailure("nghttp2: cannot submit SETTINGS")
        }
        try pump()
    }

    /// Writes everything nghttp2 has to send.
    private func pump() throws(CheckFailure) {
        guard let session else { throw CheckFailure("connection closed") }
        while true {
            var chunk: UnsafePointer<UInt8>? = nil
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 { throw CheckFailure("nghttp2 send: \(String(cString: nghttp2_strerror(Int32(count))))") }
            guard count > 0, let chunk else { return }
            try socket.send(Array(UnsafeBufferPointer(start: chunk, count: count)))
        }
    }

    /// Feeds what the socket has to nghttp2; false when the deadline passed or the peer closed.
    private func receive(until deadline: ContinuousClock.Instant) throws(CheckFailure) -> Bool {
        guard let session else { throw CheckFailure("connection closed") }
        guard try socket.readSome(until: deadline, into: .raw), !socket.raw.isEmpty else { return false }
        let bytes = socket.raw
        socket.raw.removeAll()
        let consumed = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        if consumed < 0 { throw CheckFailure("nghttp2 receive: \(String(cString: nghttp2_strerror(Int32(consumed))))") }
        try pump()
        return true
    }

    /// A unary (or server-streaming, read to its end) call.
    package func call(
        _ method: String, _ message: [UInt8], timeoutMilliseconds: UInt32, metadata: [MetadataEntry]
    ) throws(CheckFailure) -> CallResult {
        guard let session else { throw CheckFailure("connection closed") }
        var body: [UInt8] = []
        FrameEncoder.appendPrefix(length: message.count, to: &body)
        body += message
        let call = Call(request: body)
        var headers = [
            (":method", "POST"), (":scheme", "http"), (":path", method), (":authority", "conformance"),
            ("content-type", "application/grpc"), ("te", "trailers"),
        ]
        if timeoutMilliseconds > 0 { headers.append(("grpc-timeout", "\(timeoutMilliseconds)m")) }
        headers += metadata.map { ($0.key, $0.value) }
        var provider = nghttp2_data_provider()
        provider.read_callback = { session, streamID, buffer, length, flags, _, user in
            guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            let me = Unmanaged<GRPCCallConnection>.fromOpaque(user).takeUnretainedValue()
            guard let call = me.calls[streamID] else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            let count = min(length, call.request.count - call.sent)
            call.request.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + call.sent, count: count) }
            call.sent += count
            if call.sent == call.request.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
            return count
        }
        let streamID = Self.withHeaderList(headers) { list, count in
            nghttp2_submit_request(session, nil, list, count, &provider, nil)
        }
        guard streamID > 0 else { throw CheckFailure("nghttp2: cannot submit the request (\(streamID))") }
        calls[streamID] = call
        defer { calls[streamID] = nil }
        try pump()
        let deadline = ContinuousClock.now + timeout
        while !call.closed {
            guard try receive(until: deadline) else {
                if socket.peerClosed { throw CheckFailure("connection closed by the server before the call ended") }
                throw CheckFailure("no answer within \(timeout)")
            }
        }
        return try Self.result(of: call, streamID: streamID)
    }

    private static func result(of call: Call, streamID: Int32) throws(CheckFailure) -> CallResult {
        guard let code = call.headers["grpc-status"].flatMap({ Int($0) }) else {
            throw CheckFailure("stream \(streamID) ended without grpc-status (RST_STREAM code \(call.resetCode))")
        }
        let status = Status(
            code: Status.Code(rawValue: code) ?? .unknown, message: percentDecoded(call.headers["grpc-message"] ?? ""))
        var messages: [[UInt8]] = []
        var index = 0
        while call.data.count - index >= 5 {
            let length =
                Int(call.data[index + 1]) << 24 | Int(call.data[index + 2]) << 16 | Int(call.data[index + 3]) << 8
                | Int(call.data[index + 4])
            guard call.data.count - index - 5 >= length else { break }
            messages.append(Array(call.data[(index + 5)..<(index + 5 + length)]))
            index += 5 + length
        }
        guard index == call.data.count else { throw CheckFailure("stream \(streamID) ended inside a message") }
        return CallResult(callID: UInt64(streamID), messages: messages, status: status)
    }

    static func percentDecoded(_ text: String) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2,
                let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func withHeaderList(_ pairs: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> Int32)
        -> Int32
    {
        var storage: [UInt8] = []
        var ranges: [(Range<Int>, Range<Int>)] = []
        for (name, value) in pairs {
            let start = storage.count
            storage += name.utf8
            let middle = storage.count
            storage += value.utf8
            ranges.append((start..<middle, middle..<storage.count))
        }
        storage.append(0)
        return storage.withUnsafeMutableBufferPointer { bytes -> Int32 in
            let base = bytes.baseAddress!
            let list = ranges.map {
                nghttp2_nv(
                    name: base + $0.0.lowerBound, value: base + $0.1.lowerBound, namelen: $0.0.count,
                    valuelen: $0.1.count,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return list.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
        }
    }
}
