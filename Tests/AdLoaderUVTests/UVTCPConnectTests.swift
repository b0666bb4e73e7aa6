import Testing

@testable import AdLoaderUV

/// A TCP handle connecting out (the Redis stores' connections): it reaches a listener on the
/// same loop, a port where nothing listens is a clear error, a host that is not an IP literal
/// is refused at once, and a connect cut short by closing the handle ends with ECANCELED.
@Suite struct UVTCPConnectTests {
    @Test func aConnectReachesAListenerAndBytesFlow() throws {
        let loop = try UVLoop()
        let listener = try UVTCPHandle(loop: loop)
        try listener.bind(host: "127.0.0.1", port: 0)
        var accepted: UVTCPHandle?
        var received: [UInt8] = []
        try listener.listen { _ in
            guard let client = try? UVTCPHandle(loop: loop) else { return }
            try? listener.accept(into: client)
            accepted = client
            try? client.readStart { result in
                if case .success(let bytes) = result { received += bytes }
            }
        }
        let port = try #require(listener.localAddress?.port)
        let client = try UVTCPHandle(loop: loop)
        var outcome: UVError??
        try client.connect(host: "127.0.0.1", port: port) { error in
            outcome = .some(error)
            _ = [UInt8]([1, 2, 3]).withUnsafeBytes { client.writeNowOrQueue($0) { { _ in } } }
        }
        for _ in 0..<1_000 where received.count < 3 { _ = loop.runOnce() }
        #expect(outcome == .some(nil))
        #expect(received == [1, 2, 3])
        client.close()
        accepted?.close()
        listener.close()
        #expect(loop.runUntilIdle())
        try loop.close()
    }

    @Test func aPortWhereNothingListensIsRefusedAndANameIsNotAnAddress() throws {
        let loop = try UVLoop()
        // A port bound and never listened on: connects are refused.
        let bound = try UVTCPHandle(loop: loop)
        try bound.bind(host: "127.0.0.1", port: 0)
        let port = try #require(bound.localAddress?.port)
        let client = try UVTCPHandle(loop: loop)
        var outcome: UVError??
        try client.connect(host: "127.0.0.1", port: port) { outcome = .some($0) }
        for _ in 0..<100 where outcome == nil { _ = loop.runOnce() }
        #expect(outcome??.name == "ECONNREFUSED")
        let named = try UVTCPHandle(loop: loop)
        #expect(throws: UVError.self) {
            try named.connect(host: "localhost", port: port) { _ in Issue.record("called back") }
        }
        for handle in [bound, client, named] { handle.close() }
        #expect(loop.runUntilIdle())
        try loop.close()
    }

    @Test func closingDuringTheConnectEndsItCancelled() throws {
        let loop = try UVLoop()
        let listener = try UVTCPHandle(loop: loop)
        try listener.bind(host: "127.0.0.1", port: 0)
        try listener.listen { _ in }
        let port = try #require(listener.localAddress?.port)
        let client = try UVTCPHandle(loop: loop)
        var outcome: UVError??
        try client.connect(host: "127.0.0.1", port: port) { outcome = .some($0) }
        client.close()
        listener.close()
        #expect(loop.runUntilIdle())
        #expect(outcome??.isCancelled == true)
        try loop.close()
    }
}
