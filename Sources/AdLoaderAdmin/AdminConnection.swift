import AdLoaderTime
import AdLoaderUV

/// One accepted admin connection: reads, parses, answers in order, enforces the timeouts.
///
/// Timeouts: while a request head is incomplete, ``AdminLimits/requestTimeout`` counts from
/// its first byte (a client trickling bytes does not extend it); between requests,
/// ``AdminLimits/idleTimeout`` counts from the last answer. Either closes the connection
/// (a late request head gets 408 first).
///
/// After an error answer the connection lingers: it reads and discards what the client still
/// sends, for up to ``lingerTime`` or until the client closes, so that closing with unread
/// bytes does not reset the connection before the client has read the answer.
///
/// - Important: loop-confined; owned by its ``AdminServer`` until it closes.
final class AdminConnection {
    private unowned let server: AdminServer
    private let handle: UVTCPHandle
    private let parser: HTTPRequestParser
    private var timer: (any ScheduledTask)?
    private var isClosing = false
    /// Close once the queued answers are written.
    private var closeAfterWrites = false
    /// An error was answered: discard input until the client closes or the linger time ends.
    private var isLingering = false
    static let lingerTime: Duration = .seconds(1)

    init(server: AdminServer, handle: UVTCPHandle) {
        self.server = server
        self.handle = handle
        parser = HTTPRequestParser(limits: server.limits)
    }

    func start() {
        handle.onClose = { [unowned self] in self.server.connectionClosed(self) }
        armTimer(waitingForRequest: false)
        do {
            try handle.readStart { [unowned self] result in self.read(result) }
        } catch {
            close()
        }
    }

    func close() {
        guard !isClosing else { return }
        isClosing = true
        timer?.cancel()
        timer = nil
        handle.close()
    }

    private func read(_ result: Result<UnsafeRawBufferPointer, UVError>) {
        guard !isClosing else { return }
        let bytes: UnsafeRawBufferPointer
        switch result {
        case .success(let chunk): bytes = chunk
        case .failure: return close()
        }
        if isLingering { return }
        let wasMidRequest = parser.isMidRequest
        let requests: [HTTPRequestHead]
        do {
            requests = try parser.feed(bytes)
        } catch {
            return fail(error)
        }
        for request in requests {
            let response = server.respond(to: request)
            send(response.encoded(keepAlive: request.keepAlive))
            if !request.keepAlive {
                finishAfterWrites()
                return
            }
        }
        // The request timeout starts at a request's first byte and is not extended by more.
        if parser.isMidRequest {
            if !wasMidRequest || !requests.isEmpty { armTimer(waitingForRequest: true) }
        } else {
            armTimer(waitingForRequest: false)
        }
        if handle.queuedWriteBytes > server.limits.maxUnsentOutput { handle.readStop() }
    }

    /// Answers the error and closes.
    private func fail(_ error: HTTPRequestError) {
        server.logger.debug("admin request refused", ["error": .string(error.description)])
        let response = HTTPResponse(status: error.code.httpStatus, text: "\(error.message)\n")
        send(response.encoded(keepAlive: false))
        guard !isClosing else { return }
        isLingering = true
        timer?.cancel()
        timer = server.scheduler.schedule(at: server.clock.now + Self.lingerTime) { [weak self] in self?.close() }
        try? handle.resumeReading()
    }

    private func send(_ bytes: [UInt8]) {
        let failure = bytes.withUnsafeBytes { buffer in
            handle.writeNowOrQueue(buffer) { { [weak self] error in self?.written(error) } }
        }
        if failure != nil { close() }
    }

    private func written(_ error: UVError?) {
        guard !isClosing else { return }
        if error != nil { return close() }
        guard handle.queuedWriteBytes == 0 else { return }
        if closeAfterWrites { return close() }
        if isLingering { return }
        try? handle.resumeReading()
    }

    private func finishAfterWrites() {
        handle.readStop()
        timer?.cancel()
        timer = nil
        if handle.queuedWriteBytes == 0 {
            close()
        } else {
            closeAfterWrites = true
            // A client that never reads its last answer must not hold the connection forever.
            timer = server.scheduler.schedule(at: server.clock.now + server.limits.requestTimeout) {
                [weak self] in self?.close()
            }
        }
    }

    private func armTimer(waitingForRequest: Bool) {
        timer?.cancel()
        let limit = waitingForRequest ? server.limits.requestTimeout : server.limits.idleTimeout
        timer = server.scheduler.schedule(at: server.clock.now + limit) { [weak self] in
            guard let self, !self.isClosing else { return }
            self.timer = nil
            if waitingForRequest {
                self.fail(HTTPRequestError(code: .timeout, message: "request head not complete within \(limit)"))
            } else {
                self.close()
            }
        }
    }
}
