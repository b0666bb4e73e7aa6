import AdLoaderCore
import AdLoaderWire
import Testing

@testable import AdLoaderClient

@Suite(.timeLimit(.minutes(1))) struct AdLoaderClientTests {
    static func lease(id: UInt64, slot: String) -> Lease {
        let ad = Ad(
            id: "ad-\(id)", adUnitID: "feed", loader: "default", creative: .native(NativeAdContent(headline: "H\(id)")),
            loadedAt: AdInstant(unixMilliseconds: 1), expiresAt: AdInstant(unixMilliseconds: 2))
        return Lease(id: id, slot: slot, expiresAt: AdInstant(unixMilliseconds: 3), ad: ad)
    }

    /// Answers a Borrow with a lease for its slot.
    static func answerBorrow(_ frame: RequestFrame, _ server: FakeServer) {
        guard let request = try? BorrowRequestMessage(decoding: frame.message) else { return }
        let lease = lease(id: UInt64(request.slot.dropFirst(5)) ?? 0, slot: request.slot)
        server.send(
            ResponseFrame(
                callID: frame.callID, message: BorrowResponseMessage(outcome: .leased, lease: lease).encoded(),
                end: true))
    }

    @Test func thousandPipelinedCallsAnsweredInReverseOrder() async throws {
        let count = 1000
        let held = Locked<[RequestFrame]>([])
        let server = try FakeServer { frame, server in
            let batch: [RequestFrame]? = held.withLock { list in
                list.append(frame)
                return list.count == count ? list : nil
            }
            for request in batch?.reversed() ?? [] { Self.answerBorrow(request, server) }
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 1...count {
                group.addTask {
                    let result = try await client.borrow(adUnitID: "feed", slot: "slot-\(i)")
                    guard case .leased(let lease, let reused) = result else {
                        Issue.record("no lease for \(i)")
                        return
                    }
                    #expect(lease.slot == "slot-\(i)" && lease.id == UInt64(i) && !reused)
                }
            }
            try await group.waitForAll()
        }
        let ids = held.withLock { $0.map(\.callID) }
        #expect(Set(ids).count == count, "call ids must be unique")
        #expect(!ids.contains(0))
    }

    /// A call-0 UNAVAILABLE (the server is shutting down): calls in flight still get their
    /// answers, new calls are refused locally, and the client closes once nothing is in flight.
    @Test func aServerGoingAwayIsLeftOnceCallsInFlightAreAnswered() async throws {
        let server = try FakeServer { frame, server in
            server.send(
                ResponseFrame(callID: 0, end: true, status: Status(code: .unavailable, message: "server shutting down"))
            )
            Self.answerBorrow(frame, server)
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let result = try await client.borrow(adUnitID: "feed", slot: "slot-7")
        guard case .leased(let lease, _) = result else {
            Issue.record("expected a lease, got \(result)")
            return
        }
        #expect(lease.id == 7)
        do {
            _ = try await client.stats()
            Issue.record("a call after the server went away was sent")
        } catch let status as Status {
            #expect(status.code == .unavailable)
        }
        // The server's stream of received frames ends when the client closes its side.
        var frames = server.received.makeAsyncIterator()
        var methods: [String] = []
        while let frame = await frames.next() { methods.append(frame.method) }
        #expect(methods == [MethodName.borrow])
    }

    @Test func nonOKAnswersAreThrownAsStatus() async throws {
        let server = try FakeServer { frame, server in
            server.send(
                ResponseFrame(
                    callID: frame.callID, end: true,
                    status: Status(code: .notFound, message: "lease_id: lease 9 is unknown")))
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        await #expect(throws: Status(code: .notFound, message: "lease_id: lease 9 is unknown")) {
            try await client.returnLease(9, shown: true)
        }
    }

    @Test func requestsCarryMethodDeadlineAndMessage() async throws {
        let server = try FakeServer { frame, server in
            server.send(
                ResponseFrame(
                    callID: frame.callID,
                    message: PrefetchResponseMessage(result: PrefetchResult(available: 1, inFlight: 2, requested: 3))
                        .encoded(), end: true))
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let result = try await client.prefetch(adUnitID: "feed", loader: "l", timeout: .milliseconds(1500))
        #expect(result == PrefetchResult(available: 1, inFlight: 2, requested: 3))
        var frames = server.received.makeAsyncIterator()
        let frame = try #require(await frames.next())
        #expect(frame.method == MethodName.prefetch && frame.timeoutMilliseconds == 1500 && !frame.cancel)
        #expect(
            try PrefetchRequestMessage(decoding: frame.message) == PrefetchRequestMessage(adUnitID: "feed", loader: "l")
        )
    }

    @Test func cancellingTheTaskSendsCancel() async throws {
        let server = try FakeServer { _, _ in }  // never answers
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let task = Task { try await client.borrow(adUnitID: "feed", wait: .seconds(30)) }
        var frames = server.received.makeAsyncIterator()
        let request = try #require(await frames.next())
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let cancel = try #require(await frames.next())
        #expect(cancel == RequestFrame.cancel(callID: request.callID))
    }

    @Test func localDeadlineThrowsDeadlineExceeded() async throws {
        let server = try FakeServer { _, _ in }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        do {
            _ = try await client.stats(timeout: .milliseconds(20))
            Issue.record("no deadline")
        } catch let status as Status {
            #expect(status.code == .deadlineExceeded)
        }
    }

    @Test func watchYieldsEventsAndCancelsWhenDropped() async throws {
        let server = try FakeServer { frame, server in
            guard !frame.cancel else {
                server.send(ResponseFrame(callID: frame.callID, end: true, status: Status(code: .cancelled)))
                return
            }
            for i in 1...3 {
                var event = AdEvent(
                    kind: .leased, at: AdInstant(unixMilliseconds: Int64(i)), loader: "default", adUnitID: "feed")
                event.leaseID = UInt64(i)
                server.send(
                    ResponseFrame(callID: frame.callID, message: EventMessage(event: event).encoded(), end: false))
            }
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        var seen: [UInt64] = []
        for try await event in client.watch(kinds: [.leased]) {
            seen.append(event.leaseID ?? 0)
            if seen.count == 3 { break }
        }
        #expect(seen == [1, 2, 3])
        var frames = server.received.makeAsyncIterator()
        let watch = try #require(await frames.next())
        #expect(watch.method == MethodName.watch)
        #expect(try WatchRequestMessage(decoding: watch.message).kinds == [.leased])
        let cancel = try #require(await frames.next())
        #expect(cancel.cancel && cancel.callID == watch.callID)
    }

    @Test func watchEndingWithAnErrorThrowsIt() async throws {
        let server = try FakeServer { frame, server in
            server.send(
                ResponseFrame(
                    callID: frame.callID, end: true, status: Status(code: .unavailable, message: "server shutting down")
                ))
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        await #expect(throws: Status(code: .unavailable, message: "server shutting down")) {
            for try await _ in client.watch() {}
        }
    }

    @Test func connectionLossFailsCallsInFlightWithUnavailable() async throws {
        let server = try FakeServer { frame, server in
            server.send(
                ResponseFrame(callID: 0, end: true, status: Status(code: .resourceExhausted, message: "too big")))
            server.disconnect()
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        do {
            _ = try await client.stats()
            Issue.record("no error")
        } catch let status as Status {
            #expect(status.code == .unavailable)
            #expect(status.message.contains("too big"))
        }
        // Later calls fail at once.
        await #expect(throws: Status.self) { try await client.stats() }
    }

    @Test func wrongServerPrefaceIsAProtocolError() async throws {
        let server = try FakeServer(preface: Array("HTTP/1.1 400\r\n".utf8)) { _, _ in }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        do {
            _ = try await client.stats()
            Issue.record("no error")
        } catch let status as Status {
            #expect(status.code == .unavailable)
            #expect(status.message.contains("protocol error"))
        }
    }

    @Test func connectFailureIsAClientError() {
        #expect(throws: AdLoaderClientError.self) {
            _ = try AdLoaderClient.connect(to: .unix(path: "/nonexistent/adloaderd.sock"))
        }
    }
}

// MARK: - Strings with NUL bytes or invalid UTF-8

extension AdLoaderClientTests {
    static func refusal(_ field: String) -> Status {
        Status(code: .invalidArgument, message: "\(field): must not contain NUL bytes (not sent)")
    }

    /// A NUL in any string argument is refused locally, naming the field; nothing is sent
    /// (it used to be cut: "unit\0evil" went out as "unit"), and the connection stays usable.
    @Test func stringsWithNULAreRefusedBeforeSending() async throws {
        let server = try FakeServer { frame, server in Self.answerBorrow(frame, server) }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        await #expect(throws: Self.refusal("ad_unit_id")) { try await client.borrow(adUnitID: "unit\0evil") }
        await #expect(throws: Self.refusal("loader")) { try await client.borrow(adUnitID: "u", loader: "\0") }
        await #expect(throws: Self.refusal("slot_key")) { try await client.borrow(adUnitID: "u", slot: "slot-1\0") }
        await #expect(throws: Self.refusal("ad_unit_id")) { try await client.prefetch(adUnitID: "a\0b") }
        await #expect(throws: Self.refusal("loader")) { try await client.prefetch(adUnitID: "a", loader: "a\0b") }
        await #expect(throws: Self.refusal("loader")) { try await client.stats(loader: "a\0b") }
        await #expect(throws: Self.refusal("ad_unit_id")) { try await client.stats(adUnitID: "a\0b") }
        await #expect(throws: Self.refusal("ad_unit_id")) {
            for try await _ in client.watch(adUnitID: "a\0b") {}
        }
        await #expect(throws: Self.refusal("method")) {
            try await client.unary(method: MethodName.borrow + "\0x", request: BorrowRequestMessage(adUnitID: "u"))
        }
        for (entry, field) in [
            (MetadataEntry(key: "k\0", value: "v"), "metadata.key"),
            (MetadataEntry(key: "k", value: "\0"), "metadata.value"),
        ] {
            await #expect(throws: Self.refusal(field)) {
                try await client.unary(
                    method: MethodName.borrow, request: BorrowRequestMessage(adUnitID: "u"), metadata: [entry])
            }
        }
        // The connection is fine, and the only frame the server ever saw is this valid call.
        let result = try await client.borrow(adUnitID: "feed", slot: "slot-9")
        guard case .leased(let lease, _) = result else { throw Status(code: .unknown, message: "no lease") }
        #expect(lease.id == 9)
        var frames = server.received.makeAsyncIterator()
        let first = await frames.next()
        #expect(
            first.map { try? BorrowRequestMessage(decoding: $0.message) }
                == BorrowRequestMessage(adUnitID: "feed", slot: "slot-9"))
        // Strings without NUL, however unusual, still go out unchanged.
        let unusual = "広告 🎉 e\u{301}"
        _ = try await client.borrow(adUnitID: unusual, slot: "slot-3")
        let second = await frames.next()
        #expect(second.map { try? BorrowRequestMessage(decoding: $0.message) }??.adUnitID == unusual)
    }

    /// `bytes` with the one occurrence of "QQQQ" replaced by `replacement` (4 bytes).
    static func replacingMarker(in bytes: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        let needle = Array("QQQQ".utf8)
        let start = bytes.indices.first { bytes[$0...].starts(with: needle) }!
        var out = bytes
        out.replaceSubrange(start..<(start + 4), with: replacement)
        return out
    }

    /// An answer whose strings hold a NUL or invalid UTF-8 is a protocol error of the server:
    /// the call fails (INTERNAL, naming the field) instead of returning altered text.
    @Test func badStringsFromTheServerAreRefused() async throws {
        let server = try FakeServer { frame, server in
            guard let request = try? BorrowRequestMessage(decoding: frame.message) else { return }
            var lease = Self.lease(id: 1, slot: "s")
            lease.ad.creative = .native(NativeAdContent(headline: "QQQQ"))
            let body = BorrowResponseMessage(outcome: .leased, lease: lease).encoded()
            let bad: [UInt8] = request.adUnitID == "nul" ? Array("ab\0c".utf8) : [0xFF, 0xFE, 0x61, 0x62]
            server.send(
                ResponseFrame(callID: frame.callID, message: Self.replacingMarker(in: body, with: bad), end: true))
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let expected = Status(
            code: .internalError,
            message: "the server's answer does not decode: lease.ad.headline: must be valid UTF-8 without NUL bytes")
        await #expect(throws: expected) { try await client.borrow(adUnitID: "nul") }
        await #expect(throws: expected) { try await client.borrow(adUnitID: "utf8") }
    }

    /// A status message that is not a valid string breaks the envelope: the connection is
    /// closed as on any protocol error.
    @Test func badStatusMessageIsAProtocolError() async throws {
        let server = try FakeServer { frame, server in
            var bytes: [UInt8] = []
            ResponseFrame(callID: frame.callID, end: true, status: Status(code: .notFound, message: "QQQQ")).append(
                to: &bytes)
            server.sendRaw(Self.replacingMarker(in: bytes, with: [0x6E, 0x6F, 0x00, 0x21]))
        }
        defer { server.stop() }
        let client = try AdLoaderClient.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        do {
            _ = try await client.returnLease(5, shown: false)
            Issue.record("no error")
        } catch let status as Status {
            #expect(status.code == .unavailable)
            #expect(
                status.message.contains("protocol error")
                    && status.message.contains("status_message: must be valid UTF-8"))
        }
    }
}
