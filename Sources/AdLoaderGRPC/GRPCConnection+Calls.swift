import AdLoaderService
import AdLoaderWire
internal import CNghttp2

/// Requests in (headers, messages, end of stream), answers out: the gRPC mapping of a call.
extension GRPCConnection {
    // MARK: nghttp2 callbacks (inside nghttp2_session_mem_recv)

    func onBeginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard frame.pointee.hd.type == Self.headersFrame, frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else {
            return 0
        }
        let id = frame.pointee.hd.stream_id
        turnWork += HTTP2Limits.streamWork
        if streams.count >= http2.maxConcurrentStreams {
            refuseOverLimit(id)
            return 0
        }
        let stream: GRPCStream
        if let spare = spareStreams.popLast() {
            spare.reset(id: id)
            stream = spare
        } else {
            stream = GRPCStream(id: id)
        }
        streams.insert(stream)
        if let session {
            _ = nghttp2_session_set_stream_user_data(session, id, Unmanaged.passUnretained(stream).toOpaque())
        }
        headerStream = Unmanaged.passUnretained(stream)
        return 0
    }

    /// A stream over SETTINGS_MAX_CONCURRENT_STREAMS: RST_STREAM REFUSED_STREAM, which tells
    /// the client the request was not processed and may be retried (RFC 9113 8.7); the other
    /// streams of the connection go on. Counted with the client's own resets, so a client that
    /// keeps opening streams over the limit ends with GOAWAY ENHANCE_YOUR_CALM.
    private func refuseOverLimit(_ id: Int32) {
        guard let session else { return }
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_REFUSED_STREAM.rawValue)
        refusedStreams += 1
        if refusedStreams == 1 {
            logger.warning(
                "client opened more streams than SETTINGS_MAX_CONCURRENT_STREAMS: refusing those over it",
                ["limit": .int(Int64(http2.maxConcurrentStreams))])
        }
        if let flood = floodGuard.count(.reset, at: clock.now.unixMilliseconds) {
            terminate(code: Self.enhanceYourCalm, reason: flood)
        }
    }

    func onHeader(
        _ frame: UnsafePointer<nghttp2_frame>, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>
    ) -> Int32 {
        turnWork += 1  // toward this turn's header work (receiveTurn)
        guard frame.pointee.hd.type == Self.headersFrame else { return 0 }
        let id = frame.pointee.hd.stream_id
        // The stream of the block being read, without a retain and a release per field.
        if let current = headerStream, current._withUnsafeGuaranteedRef({ $0.id == id }) {
            return current._withUnsafeGuaranteedRef { onHeader(of: $0, name: name, value: value) }
        }
        guard let found = openStream(id) else { return 0 }
        return onHeader(of: found, name: name, value: value)
    }

    private func onHeader(
        of stream: GRPCStream, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>
    ) -> Int32 {
        stream.headerListSize += name.count + value.count + 32
        if stream.headerListSize > http2.maxHeaderListSize, stream.refusal == nil {
            stream.refusal = (
                Status(
                    code: .resourceExhausted, message: "header list: limit of \(http2.maxHeaderListSize) bytes exceeded"
                ),
                200
            )
            stream.headerListOverflowSize = stream.headerListSize
        }
        if stream.headerListSize > 2 * http2.maxHeaderListSize
            || (stream.headerListOverflowSize > 0
                && stream.headerListSize > stream.headerListOverflowSize + Self.headerListSlack)
        {
            // Far over the advertised SETTINGS_MAX_HEADER_LIST_SIZE (HPACK lets one byte stand
            // for a 4 KB field), or more fields after the list went over it than a request that
            // is merely too big has: no client that reads the server's SETTINGS sends it. The
            // connection ends (GOAWAY ENHANCE_YOUR_CALM) and nghttp2 stops here: resetting only
            // the stream would leave nghttp2 to decode the rest of the block without callbacks
            // (to keep the HPACK table in step), up to ~144 KB of one-byte references per
            // stream on the one loop, that no turn can bound (issue 28's header-table abuse).
            if !stream.accepted { server.callRefused(method: stream.path, code: .resourceExhausted) }
            if pendingCalm == nil {
                pendingCalm =
                    "a header list far over SETTINGS_MAX_HEADER_LIST_SIZE (\(http2.maxHeaderListSize) bytes): \(stream.headerListSize) bytes decoded"
            }
            return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        guard stream.refusal == nil, !stream.accepted else { return 0 }
        // Names compared as bytes: no String per header field.
        switch GRPCHeaderName(name) {
        case .path: (stream.path, stream.pathRoute) = Self.path(value)
        case .method: stream.httpMethod = Self.httpMethod(value)
        case .contentType:
            stream.contentTypeIsGRPC = GRPCHeaderName.bytesEqual(value, Self.grpcContentTypeBytes.bytes)
            stream.contentType =
                stream.contentTypeIsGRPC ? Self.grpcContentType : String(decoding: value, as: UTF8.self)
        case .encoding: stream.encoding = String(decoding: value, as: UTF8.self)
        case .timeout: stream.timeoutValue = String(decoding: value, as: UTF8.self)
        case .authorization: stream.authorization = String(decoding: value, as: UTF8.self)
        case .other:
            // The call's metadata, for the service; past its bounds the call is refused.
            guard !CallMetadata.isTransportKey(UnsafeRawBufferPointer(name)) else { break }
            do throws(MetadataError) {
                try stream.metadata.append(
                    key: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
            } catch {
                stream.refusal = (error.status, 200)
            }
        }
        return 0
    }

    func onFrameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard phase == .open else { return 0 }
        let header = frame.pointee.hd
        let endStream = header.flags & Self.endStreamFlag != 0
        var flood: String?
        // The clock is read only for a frame the flood guard counts (not for a call's HEADERS
        // and DATA).
        var now: Int64 { clock.now.unixMilliseconds }
        switch header.type {
        case Self.headersFrame:
            if let found = openStreamReference(header.stream_id) {
                let isRequest = frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
                found._withUnsafeGuaranteedRef { stream in
                    if isRequest { headersReceived(stream) }
                    if endStream { requestEnded(stream) }
                }
            }
        case Self.dataFrame:
            if header.length == 0, !endStream { flood = floodGuard.count(.control, at: now) }
            if endStream, let found = openStreamReference(header.stream_id) {
                found._withUnsafeGuaranteedRef { requestEnded($0) }
            }
        case Self.resetFrame:
            flood = floodGuard.count(.reset, at: now)
        case Self.settingsFrame:
            if header.flags & Self.ackFlag == 0 { flood = floodGuard.count(.control, at: now) }
        case Self.pingFrame:
            if header.flags & Self.ackFlag == 0 {
                flood = floodGuard.count(.control, at: now)
            } else {
                pingAcknowledged()
            }
        case Self.priorityFrame:
            flood = floodGuard.count(.control, at: now)
        default:
            break
        }
        if let flood { terminate(code: Self.enhanceYourCalm, reason: flood) }
        return 0
    }

    /// A frame left (inside `nghttp2_session_mem_send`): an RST_STREAM with an error code is
    /// a reset the server sent itself because a frame was a stream error (MadeYouReset); too
    /// many end the connection at the next flush (the session cannot be re-entered here).
    func onFrameSent(_ frame: UnsafePointer<nghttp2_frame>) {
        guard frame.pointee.hd.type == Self.resetFrame,
            frame.pointee.rst_stream.error_code != NGHTTP2_NO_ERROR.rawValue,
            // REFUSED_STREAM (a stream over the limit) is counted where it is refused.
            frame.pointee.rst_stream.error_code != NGHTTP2_REFUSED_STREAM.rawValue,
            phase == .open, pendingCalm == nil
        else { return }
        pendingCalm = floodGuard.count(.sentReset, at: clock.now.unixMilliseconds)
    }

    func onData(_ streamID: Int32, _ data: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard phase == .open, let found = openStreamReference(streamID) else { return 0 }
        return found._withUnsafeGuaranteedRef { onData(of: $0, data) }
    }

    private func onData(of stream: GRPCStream, _ data: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard stream.accepted, !stream.finished, stream.trailer == nil else {
            return 0
        }
        if stream.bodyStart == stream.body.count {
            // Nothing buffered: whole messages are taken where nghttp2 holds them.
            let used = cutMessages(stream, UnsafeRawBufferPointer(data))
            if used < data.count, !stream.finished, stream.trailer == nil {
                stream.body.removeAll(keepingCapacity: true)
                stream.bodyStart = 0
                stream.body.append(contentsOf: UnsafeBufferPointer(rebasing: data[used...]))
            }
            return 0
        }
        stream.body.append(contentsOf: data)
        let used = stream.body.withUnsafeBytes { bytes in
            cutMessages(stream, UnsafeRawBufferPointer(rebasing: bytes[stream.bodyStart...]))
        }
        stream.bodyStart += used
        if stream.bodyStart == stream.body.count {
            stream.body.removeAll(keepingCapacity: true)
            stream.bodyStart = 0
        }
        return 0
    }

    /// The open stream `id`, found through nghttp2's stream map (its user data), not a
    /// dictionary lookup (Int32 hashing was ~2 % of a gRPC call's instructions); the id check
    /// makes a reused stream object never answer for another stream.
    /// The stream the last lookup found is checked first: the callbacks of one call come in a
    /// row (its DATA, END_STREAM, answer, frames sent), so most lookups need no map search.
    @inline(__always)
    func openStream(_ id: Int32) -> GRPCStream? { openStreamReference(id)?.takeUnretainedValue() }

    /// ``openStream(_:)`` unretained, for the hot callbacks (`_withUnsafeGuaranteedRef`: no
    /// retain and release of the stream per callback). Valid while the stream is open: a
    /// stream leaves ``streams`` (and ``lastStream``) only in ``onStreamClosed(_:errorCode:)``.
    @inline(__always)
    func openStreamReference(_ id: Int32) -> Unmanaged<GRPCStream>? {
        if let last = lastStream, last._withUnsafeGuaranteedRef({ $0.id == id && $0.slot >= 0 }) { return last }
        guard let session, let data = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        let stream = Unmanaged<GRPCStream>.fromOpaque(data)
        guard stream._withUnsafeGuaranteedRef({ $0.id == id }) else { return nil }
        lastStream = stream
        return stream
    }

    func onStreamClosed(_ streamID: Int32, errorCode: UInt32) -> Int32 {
        // nghttp2 still holds the stream (and its user data) while it calls back.
        guard let stream = openStream(streamID), streams.remove(stream) else { return 0 }
        // nghttp2 may keep the closed stream a while (priorities): it must not point at an
        // object that is reused or freed.
        if let session { _ = nghttp2_session_set_stream_user_data(session, streamID, nil) }
        bufferedAnswerBytes -= stream.pendingCount
        if headerStream?.toOpaque() == Unmanaged.passUnretained(stream).toOpaque() { headerStream = nil }
        if lastStream?.toOpaque() == Unmanaged.passUnretained(stream).toOpaque() { lastStream = nil }
        if let call = stream.call {
            // Cancelled by RST_STREAM, or the connection is going: no answer can reach it.
            stream.call = nil
            service.end(call, answering: nil)
        }
        if spareStreams.count < Self.spareStreamLimit {
            stream.retire()
            spareStreams.append(stream)
        }
        goAwayIfDrained()
        streamSettled()
        return 0
    }

    /// The most finished streams a connection keeps for reuse.
    static let spareStreamLimit = 32

    /// How many bytes of answers queued on `streamID` the next DATA frame carries (at most
    /// `length`); nghttp2 then asks ``sendAnswer(_:frameHeader:length:)`` to write them
    /// (`NGHTTP2_DATA_FLAG_NO_COPY`). The trailers once every byte is taken and the call has its
    /// final status.
    func readAnswer(
        _ streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let found = openStreamReference(streamID), let session else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        return found._withUnsafeGuaranteedRef {
            readAnswer(of: $0, streamID, session: session, length: length, flags: flags)
        }
    }

    private func readAnswer(
        of stream: GRPCStream, _ streamID: Int32, session: OpaquePointer, length: Int,
        flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        let count = min(length, stream.pendingCount)
        if count > 0 { flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue }
        if count == stream.pendingCount, let status = stream.trailer, !stream.finished {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue | NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            stream.finished = true
            let rv: Int32
            if status.code == .ok, status.message.isEmpty {
                rv = nghttp2_submit_trailer(session, streamID, okTrailers.entries, okTrailers.count)
            } else {
                rv = Self.withHeaderList(Self.statusHeaders(status)) { list, count in
                    nghttp2_submit_trailer(session, streamID, list, count)
                }
            }
            if rv != 0 { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
            return count
        }
        if count == 0 {
            stream.deferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return count
    }

    /// Writes one DATA frame of `streamID` (the frame header nghttp2 made, then `length` bytes
    /// of the stream's queued answers, no padding) to the connection's output.
    func sendAnswer(_ streamID: Int32, frameHeader: UnsafeBufferPointer<UInt8>, length: Int) -> Int32 {
        guard let found = openStreamReference(streamID) else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        return found._withUnsafeGuaranteedRef { sendAnswer(of: $0, frameHeader: frameHeader, length: length) }
    }

    private func sendAnswer(of stream: GRPCStream, frameHeader: UnsafeBufferPointer<UInt8>, length: Int) -> Int32 {
        guard length <= stream.pendingCount else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        output.append(contentsOf: frameHeader)
        if length > 0 {
            stream.pending.withUnsafeBufferPointer { bytes in
                output.append(
                    contentsOf: UnsafeBufferPointer(
                        rebasing: bytes[stream.pendingStart..<(stream.pendingStart + length)]))
            }
            stream.pendingStart += length
            bufferedAnswerBytes -= length
        }
        if stream.pendingCount == 0 {
            stream.pending.removeAll(keepingCapacity: stream.pending.capacity <= 64 * 1024)
            stream.pendingStart = 0
        }
        return 0
    }

    // MARK: Requests

    /// The request's headers are in: refuse it at once (trailers-only) or accept it.
    private func headersReceived(_ stream: GRPCStream) {
        if stream.refusal == nil { stream.refusal = check(stream) }
        if let refusal = stream.refusal {
            refuse(stream, refusal.status, httpStatus: refusal.httpStatus)
            return
        }
        stream.accepted = true
    }

    private func check(_ stream: GRPCStream) -> (status: Status, httpStatus: Int)? {
        if stream.httpMethod != "POST" {
            return (Status(code: .unimplemented, message: "HTTP method \(stream.httpMethod): gRPC calls are POST"), 405)
        }
        if !stream.contentTypeIsGRPC {
            guard let contentType = stream.contentType, GRPCWire.isGRPCContentType(contentType) else {
                let shown = stream.contentType ?? "(none)"
                return (
                    Status(code: .invalidArgument, message: "content-type \(shown): expected application/grpc"), 415
                )
            }
        }
        if let encoding = stream.encoding, encoding != "identity" {
            return (
                Status(code: .unimplemented, message: "grpc-encoding \(encoding) is not supported; use identity"), 200
            )
        }
        // The server's admission step, as on every transport: calls in flight, the method,
        // the token (PROTOCOL.md 5.2); health and reflection are methods of this transport.
        // Health answers without a token, as an orchestrator's probe (a Kubernetes gRPC probe)
        // cannot send one; it tells only whether the server serves. Reflection and every
        // service method keep auth.
        let route = stream.pathRoute
        if let route { stream.route = route }
        let isHealth = route == .healthCheck || route == .healthWatch
        if let refusal = server.admitCall(
            method: stream.path, methodIsKnown: route != nil, callsInFlight: streams.count - 1,
            authorization: stream.authorization, peerIsLocal: peerIsLocal, needsToken: !isHealth)
        {
            return (refusal, 200)
        }
        if let value = stream.timeoutValue {
            guard let timeout = GRPCWire.parseTimeout(value) else {
                return (Status(code: .invalidArgument, message: "grpc-timeout \"\(value)\" is malformed"), 200)
            }
            stream.timeout = timeout
        }
        return nil
    }

    /// Takes the whole length-prefixed messages at the start of `bytes` (refusing the stream
    /// on a bad prefix). - Returns: the bytes used; the rest starts a message not yet whole.
    private func cutMessages(_ stream: GRPCStream, _ bytes: UnsafeRawBufferPointer) -> Int {
        var start = 0
        // Once the connection is to end for abuse, the rest of what it sent is not worked on.
        while !stream.finished, stream.trailer == nil, pendingCalm == nil {
            let available = bytes.count - start
            guard available >= 5 else { break }
            let flag = bytes[start]
            let length =
                Int(bytes[start + 1]) << 24 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 8
                | Int(bytes[start + 4])
            if length > limits.maxMessageSize {
                refuse(
                    stream,
                    Status(
                        code: .resourceExhausted,
                        message: "message of \(length) bytes exceeds the limit of \(limits.maxMessageSize) bytes"))
                return bytes.count
            }
            if flag != 0 {
                let reason = flag == 1 ? "a compressed message with grpc-encoding identity" : "compressed flag \(flag)"
                refuse(stream, Status(code: .internalError, message: reason))
                return bytes.count
            }
            guard available >= 5 + length else { break }
            let message = UnsafeRawBufferPointer(rebasing: bytes[(start + 5)..<(start + 5 + length)])
            start += 5 + length
            stream.messageCount += 1
            if stream.route == .reflection, stream.pendingCount > unreadAnswerAllowance(stream) {
                // Requests keep coming while the answers are not read (the client's window is
                // closed, or full): the stream ends rather than computing answers that cannot
                // leave. With a window of 0, that is after its first answer.
                refuse(
                    stream,
                    Status(
                        code: .resourceExhausted,
                        message:
                            "reflection: answers not read (\(stream.pendingCount) bytes wait beyond the stream's window)"
                    ))
                return bytes.count
            } else if stream.route == .reflection {
                answerReflection(stream, Array(message))
            } else if stream.messageCount > 1 {
                refuse(stream, Status(code: .invalidArgument, message: "more than one request message"))
                return bytes.count
            } else if stream.route == .service {
                // Kept (in the stream's own storage) and decoded once the request ends.
                stream.keepServiceMessage(message)
            } else {
                stream.message = Array(message)
            }
        }
        return start
    }

    /// The client's END_STREAM: a unary or server-streaming call is complete.
    private func requestEnded(_ stream: GRPCStream) {
        stream.requestEnded = true
        guard stream.accepted, !stream.finished, stream.trailer == nil, !stream.dispatched else { return }
        stream.dispatched = true
        defer { streamSettled() }
        if stream.bodyStart < stream.body.count {
            refuse(stream, Status(code: .internalError, message: "the request ended inside a message"))
            return
        }
        if stream.route == .reflection {
            finish(stream, status: .ok)
            return
        }
        if stream.route == .service {
            guard stream.hasServiceMessage else {
                refuse(stream, Status(code: .invalidArgument, message: "no request message"))
                return
            }
            // Decoded in place, in the stream's storage, as the framed scanner does.
            do throws(Status) {
                let request = try ServiceRequest(method: stream.path, message: stream.serviceMessage)
                if let open = service.handle(
                    request, callID: UInt64(stream.id), timeout: stream.timeout, metadata: stream.metadata,
                    responder: self)
                {
                    stream.call = open
                }
            } catch {
                refuse(stream, error)
            }
            return
        }
        guard let message = stream.message else {
            refuse(stream, Status(code: .invalidArgument, message: "no request message"))
            return
        }
        answerHealth(stream, message)
    }

    /// Answers a call refused before it reached the service, reporting it with the
    /// service's refusals (metrics count every transport's); health and reflection calls are
    /// this transport's own and not reported.
    private func refuse(_ stream: GRPCStream, _ status: Status, httpStatus: Int = 200) {
        guard !stream.finished, stream.trailer == nil else { return }
        if stream.route == nil || stream.route == .service {
            server.callRefused(method: stream.path, code: status.code)
        }
        finish(stream, status: status, httpStatus: httpStatus)
    }

    private func answerHealth(_ stream: GRPCStream, _ message: [UInt8]) {
        guard let name = HealthService.serviceName(decoding: message) else {
            finish(stream, status: Status(code: .invalidArgument, message: "HealthCheckRequest does not decode"))
            return
        }
        let status = transport.health.status(of: name, draining: transport.isDraining || service.isDraining)
        if stream.route == .healthCheck {
            guard status != .serviceUnknown else {
                finish(stream, status: Status(code: .notFound, message: "unknown service \"\(name)\""))
                return
            }
            send(stream, message: HealthService.response(status))
            finish(stream, status: .ok)
        } else {
            // Stays open: the drain sends NOT_SERVING. Once it began: NOT_SERVING, then the end.
            send(stream, message: HealthService.response(status))
            if transport.isDraining {
                finish(stream, status: Status(code: .unavailable, message: "server shutting down"))
            }
        }
    }

    private func answerReflection(_ stream: GRPCStream, _ message: [UInt8]) {
        guard let answer = transport.reflection.answer(message[...]) else {
            finish(stream, status: Status(code: .invalidArgument, message: "ServerReflectionRequest does not decode"))
            return
        }
        send(stream, message: answer)
    }

    // MARK: Answers

    /// Queues one message (unframed) on `stream`, starting the response if needed.
    func send(_ stream: GRPCStream, message: [UInt8]) {
        send(stream) { buffer in
            FrameEncoder.appendPrefix(length: message.count, to: &buffer)
            buffer.append(contentsOf: message)
        }
    }

    /// Queues bytes `append` writes (whole length-prefixed messages) on `stream`.
    func send(_ stream: GRPCStream, _ append: (inout [UInt8]) -> Void) {
        guard !stream.finished, stream.trailer == nil, let session else { return }
        if unsentByteCount > limits.maxUnsentOutputPerConnection {
            // Answers pile up (the client's window is closed or it does not read) while it asks
            // for more: it cannot be paused as the framed transport is (its WINDOW_UPDATEs come
            // on the same stream of bytes), so it ends. Not here: the service may be iterating
            // over calls of this connection.
            if pendingCalm == nil {
                pendingCalm =
                    "client is not reading its answers: \(unsentByteCount) bytes unsent, limit \(limits.maxUnsentOutputPerConnection) (limits.maxUnsentOutputPerConnection)"
            }
            markDirty()
            return
        }
        if !stream.responseStarted {
            stream.responseStarted = true
            var provider = Self.dataProvider()
            let rv =
                stream.responseMetadata.isEmpty
                ? nghttp2_submit_response(
                    session, stream.id, responseHeaders.entries, responseHeaders.count, &provider)
                : Self.withHeaderList(
                    responseHeaders.pairs.map { ($0.name, $0.value) }
                        + stream.responseMetadata.map { ($0.key, $0.value) }
                ) {
                    nghttp2_submit_response(session, stream.id, $0, $1, &provider)
                }
            if rv != 0 {
                logger.warning(
                    "cannot answer a stream", ["stream": .int(Int64(stream.id)), "error": .string(Self.errorName(rv))])
                stream.finished = true
                return
            }
        }
        let before = stream.pending.count
        append(&stream.pending)
        bufferedAnswerBytes += stream.pending.count - before
        resume(stream)
    }

    /// The final status: trailers after the messages sent, or a trailers-only response.
    func finish(_ stream: GRPCStream, status: Status, httpStatus: Int = 200) {
        // Once the connection is to end for abuse (pendingCalm), nothing more is answered.
        guard !stream.finished, stream.trailer == nil, pendingCalm == nil, let session else { return }
        if stream.responseStarted {
            stream.trailer = status
            resume(stream)
            return
        }
        stream.finished = true
        var headers = [(":status", String(httpStatus)), ("content-type", "application/grpc")]
        if status.code == .unimplemented, stream.encoding != nil {
            headers.append(("grpc-accept-encoding", "identity"))
        }
        for entry in server.responseMetadata { headers.append((entry.key, entry.value)) }
        for entry in stream.responseMetadata { headers.append((entry.key, entry.value)) }
        headers += Self.statusHeaders(status)
        _ = Self.withHeaderList(headers) { list, count in
            nghttp2_submit_response(session, stream.id, list, count, nil)
        }
        // Answered before the request ended (refused, oversized): the rest of the request is
        // read and dropped (onData). No RST_STREAM(NO_ERROR) here: grpc-core reports one that
        // arrives with the trailers as INTERNAL instead of the status.
        markDirty()
    }

    private func resume(_ stream: GRPCStream) {
        if stream.deferred, let session {
            stream.deferred = false
            _ = nghttp2_session_resume_data(session, stream.id)
        }
        markDirty()
    }

    /// Header-list bytes (name + value + 32 per field) still read after the list went over
    /// the limit, so that the request is answered RESOURCE_EXHAUSTED; past it, the stream is
    /// reset. A few ordinary fields (grpc-timeout, user-agent) fit.
    static let headerListSlack = 1024

    /// Bytes of answers a stream that carries many requests (reflection) may hold unsent before
    /// more requests on it end it RESOURCE_EXHAUSTED: what the client's window still takes, at
    /// most one default stream window.
    func unreadAnswerAllowance(_ stream: GRPCStream) -> Int {
        guard let session else { return 0 }
        let window = Int(nghttp2_session_get_stream_remote_window_size(session, stream.id))
        return min(max(window, 0), 65_535)
    }

    // MARK: Routes

    static let healthCheckPath = "/grpc.health.v1.Health/Check"
    static let healthWatchPath = "/grpc.health.v1.Health/Watch"
    static let reflectionPaths = [
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ]

    static func route(_ path: String) -> GRPCStream.Route? {
        if ServiceRequest.isKnown(path) { return .service }
        if path == healthCheckPath { return .healthCheck }
        if path == healthWatchPath { return .healthWatch }
        if reflectionPaths.contains(path) { return .reflection }
        return nil
    }

    /// The known paths: their bytes, the strings used for them (the service's own method-name
    /// strings, so its method table recognises them by identity, ``ServiceRequest``), their routes.
    private static let knownPaths: [(bytes: KnownBytes, path: String, route: GRPCStream.Route)] =
        (MethodName.all + [healthCheckPath, healthWatchPath] + reflectionPaths).compactMap { path in
            route(path).map { (KnownBytes(path), path, $0) }
        }

    /// The `:path` value as a string and its route: a known path without a new string or a
    /// string comparison; any other path has no route.
    static func path(_ value: UnsafeBufferPointer<UInt8>) -> (String, GRPCStream.Route?) {
        // Through the array's buffer: no copy (retain and release) of the entries passed over.
        let found = knownPaths.withUnsafeBufferPointer { known -> Int? in
            for index in known.indices where GRPCHeaderName.bytesEqual(value, known[index].bytes.bytes) {
                return index
            }
            return nil
        }
        if let found { return (knownPaths[found].path, knownPaths[found].route) }
        return (String(decoding: value, as: UTF8.self), nil)
    }

    private static let post = "POST"
    private static let postBytes = KnownBytes(post)

    /// The `:method` value as a string.
    static func httpMethod(_ value: UnsafeBufferPointer<UInt8>) -> String {
        GRPCHeaderName.bytesEqual(value, postBytes.bytes) ? post : String(decoding: value, as: UTF8.self)
    }

    static let grpcContentType = "application/grpc"
    static let grpcContentTypeBytes = KnownBytes(grpcContentType)

    // MARK: CallResponder

    var isOpen: Bool { phase == .open }

    var unsentByteCount: Int { bufferedAnswerBytes + stream.queuedWriteBytes }

    private func open(_ callID: UInt64) -> GRPCStream? { openStream(Int32(truncatingIfNeeded: callID)) }

    /// A unary call's OK answer; a Borrow's ad is copied from the server-wide encoding cache.
    func answer(_ callID: UInt64, _ response: ServiceResponse) {
        guard let found = openStreamReference(Int32(truncatingIfNeeded: callID)) else { return }
        let encodings = server.adEncodings
        found._withUnsafeGuaranteedRef { stream in
            send(stream) { response.appendLengthPrefixed(cache: encodings, to: &$0) }
            finish(stream, status: .ok)
        }
    }

    /// A gRPC client's message size limit applies to the message itself.
    func answerSize(_ callID: UInt64, messageSize: Int) -> Int { messageSize }

    func stream(_ callID: UInt64, _ message: some WireMessage) {
        guard let stream = open(callID) else { return }
        send(stream) { message.appendFrame(to: &$0) }
    }

    func finish(_ callID: UInt64, status: Status) {
        guard let stream = open(callID) else { return }
        finish(stream, status: status)
    }

    func addResponseMetadata(_ callID: UInt64, _ metadata: CallMetadata) {
        guard let stream = open(callID), !stream.responseStarted else { return }
        for entry in metadata { try? stream.responseMetadata.append(key: entry.key, value: entry.value) }
    }

    func openCallEnded(_ call: OpenCall) {
        guard let stream = open(call.callID), stream.call === call else { return }
        stream.call = nil
    }
}
