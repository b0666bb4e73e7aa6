import AdLoaderWire
internal import CNghttp2

/// The nghttp2 session: its creation with the callbacks and options, the trampolines that
/// reach the connection through `user_data`, and header lists.
extension GRPCConnection {
    /// Calls `body` with the connection at `userData` without retaining it: nghttp2 calls back
    /// only while the connection holds its session (deleted in ``close(reason:level:)``), so it
    /// is alive for the whole callback. A retain and release per callback (~17 callbacks per
    /// call) were ~1.5k instructions of a gRPC Borrow (callgrind).
    @inline(__always)
    static func with<T>(_ userData: UnsafeMutableRawPointer, _ body: (GRPCConnection) -> T) -> T {
        Unmanaged<GRPCConnection>.fromOpaque(userData)._withUnsafeGuaranteedRef(body)
    }

    /// A server session whose callbacks reach the connection at `userData`.
    static func makeSession(
        userData: UnsafeMutableRawPointer, limits: HTTP2Limits, allocator: HTTP2Allocator
    ) -> OpaquePointer? {
        var created: OpaquePointer?
        guard nghttp2_session_callbacks_new(&created) == 0, let callbacks = created else { return nil }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            guard let frame, let userData else { return 0 }
            return GRPCConnection.with(userData) { $0.onBeginHeaders(frame) }
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, userData in
            guard let frame, let name, let value, let userData else { return 0 }
            return GRPCConnection.with(userData) {
                $0.onHeader(
                    frame, name: UnsafeBufferPointer(start: name, count: nameLength),
                    value: UnsafeBufferPointer(start: value, count: valueLength))
            }
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            guard let frame, let userData else { return 0 }
            return GRPCConnection.with(userData) { $0.onFrameReceived(frame) }
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, userData in
            guard let userData, let data else { return 0 }
            return GRPCConnection.with(userData) {
                $0.onData(streamID, UnsafeBufferPointer(start: data, count: length))
            }
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, userData in
            guard let frame, let userData else { return 0 }
            GRPCConnection.with(userData) { $0.onFrameSent(frame) }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
            guard let userData else { return 0 }
            return GRPCConnection.with(userData) { $0.onStreamClosed(streamID, errorCode: errorCode) }
        }
        // DATA frames of answers are written by us (NGHTTP2_DATA_FLAG_NO_COPY): the frame
        // header nghttp2 made and the answer's bytes go straight to the connection's output.
        nghttp2_session_callbacks_set_send_data_callback(callbacks) { _, frame, frameHeader, length, _, userData in
            guard let frame, let frameHeader, let userData else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            return GRPCConnection.with(userData) {
                $0.sendAnswer(
                    frame.pointee.hd.stream_id, frameHeader: UnsafeBufferPointer(start: frameHeader, count: 9),
                    length: length)
            }
        }
        var createdOption: OpaquePointer?
        guard nghttp2_option_new(&createdOption) == 0, let option = createdOption else { return nil }
        defer { nghttp2_option_del(option) }
        // CONTINUATION floods (CVE-2024-28182): a bound on frames per header block.
        nghttp2_option_set_max_continuations(option, limits.maxContinuations)
        // SETTINGS and PING floods also make nghttp2 queue acks: bound them (it ends the
        // session with a GOAWAY past it); our own counter usually ends it first.
        nghttp2_option_set_max_outbound_ack(option, 1000)
        nghttp2_option_set_max_settings(option, 32)
        // nghttp2 keeps closed streams only to maintain the RFC 7540 priority tree; the
        // transport does not prioritize answers, and each kept stream was more work on every
        // close (and memory per connection).
        nghttp2_option_set_no_closed_streams(option, 1)
        var session: OpaquePointer?
        // nghttp2 copies the allocator's functions; the connection keeps the allocator.
        var memory = allocator.memory
        guard nghttp2_session_server_new3(&session, callbacks, userData, option, &memory) == 0 else { return nil }
        return session
    }

    /// The data provider of every response: answers are taken from the stream's queue.
    static func dataProvider() -> nghttp2_data_provider {
        var provider = nghttp2_data_provider()
        provider.read_callback = { _, streamID, buffer, length, flags, _, userData in
            guard let userData, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
            return GRPCConnection.with(userData) { $0.readAnswer(streamID, into: buffer, length: length, flags: flags) }
        }
        return provider
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS nghttp2 enforces when the client is told
    /// `limits.maxConcurrentStreams`. nghttp2 answers a stream over its own limit with GOAWAY
    /// PROTOCOL_ERROR, ending every call of the connection; the transport refuses the streams
    /// over the advertised limit itself (RST_STREAM REFUSED_STREAM, RFC 9113 5.1.2) and counts
    /// each refusal as a reset (``FloodGuard``). A refused stream stays open in nghttp2 until
    /// its RST_STREAM is written, so the enforced limit leaves room for one reset budget of
    /// them: before nghttp2's own limit is reached, the flood guard has ended the connection
    /// with ENHANCE_YOUR_CALM, and a client never sees PROTOCOL_ERROR for it.
    static func enforcedMaxConcurrentStreams(limits: HTTP2Limits) -> UInt32 {
        UInt32(clamping: limits.maxConcurrentStreams + limits.maxResetsPerWindow + 1)
    }

    /// Rewrites the value of SETTINGS_MAX_CONCURRENT_STREAMS in the first SETTINGS frame (not
    /// an ACK) of `output` to `value`: the session's own SETTINGS, as nghttp2 wrote them with
    /// its enforced limit, go out with the advertised one.
    /// - Returns: whether the frame and the setting were found (then rewritten).
    static func advertise(maxConcurrentStreams value: UInt32, in output: inout [UInt8]) -> Bool {
        var offset = 0
        while offset + 9 <= output.count {
            let length = Int(output[offset]) << 16 | Int(output[offset + 1]) << 8 | Int(output[offset + 2])
            let type = output[offset + 3]
            let flags = output[offset + 4]
            let payload = offset + 9
            guard payload + length <= output.count else { return false }
            if type == settingsFrame, flags & ackFlag == 0 {
                var entry = payload
                while entry + 6 <= payload + length {
                    let id = Int(output[entry]) << 8 | Int(output[entry + 1])
                    if id == Int(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue) {
                        output[entry + 2] = UInt8(truncatingIfNeeded: value >> 24)
                        output[entry + 3] = UInt8(truncatingIfNeeded: value >> 16)
                        output[entry + 4] = UInt8(truncatingIfNeeded: value >> 8)
                        output[entry + 5] = UInt8(truncatingIfNeeded: value)
                        return true
                    }
                    entry += 6
                }
                return false
            }
            offset = payload + length
        }
        return false
    }

    /// Calls `body` with `pairs` as an nghttp2 header list (nghttp2 copies it).
    static func withHeaderList(
        _ pairs: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> Int32
    ) -> Int32 {
        var storage: [UInt8] = []
        var ranges: [(name: Range<Int>, value: Range<Int>)] = []
        for (name, value) in pairs {
            let nameStart = storage.count
            storage.append(contentsOf: name.utf8)
            let valueStart = storage.count
            storage.append(contentsOf: value.utf8)
            ranges.append((nameStart..<valueStart, valueStart..<storage.count))
        }
        storage.append(0)  // never empty, so the base address exists
        return storage.withUnsafeMutableBufferPointer { bytes -> Int32 in
            let base = bytes.baseAddress!
            let list = ranges.map { range in
                nghttp2_nv(
                    name: base + range.name.lowerBound, value: base + range.value.lowerBound, namelen: range.name.count,
                    valuelen: range.value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return list.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
        }
    }

    /// The trailers (or trailers-only headers) carrying `status`.
    static func statusHeaders(_ status: Status) -> [(String, String)] {
        var headers = [("grpc-status", String(status.code.rawValue))]
        if !status.message.isEmpty { headers.append(("grpc-message", GRPCWire.percentEncode(status.message))) }
        return headers
    }

    // MARK: Frame kinds

    static let headersFrame = UInt8(NGHTTP2_HEADERS.rawValue)
    static let dataFrame = UInt8(NGHTTP2_DATA.rawValue)
    static let resetFrame = UInt8(NGHTTP2_RST_STREAM.rawValue)
    static let settingsFrame = UInt8(NGHTTP2_SETTINGS.rawValue)
    static let pingFrame = UInt8(NGHTTP2_PING.rawValue)
    static let priorityFrame = UInt8(NGHTTP2_PRIORITY.rawValue)
    static let endStreamFlag = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)
    static let ackFlag = UInt8(NGHTTP2_FLAG_ACK.rawValue)
    static let enhanceYourCalm = NGHTTP2_ENHANCE_YOUR_CALM.rawValue
}
