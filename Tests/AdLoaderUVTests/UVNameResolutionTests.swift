import Testing

@testable import AdLoaderUV

/// Name lookups off the loop (the Redis stores' host names): a name in /etc/hosts resolves to an
/// IP literal, a name that cannot be one fails with the resolver's error, and a cancelled lookup
/// never calls back yet releases its request. Only /etc/hosts and the resolver's own checks are
/// used: no lookup leaves the machine.
@Suite struct UVNameResolutionTests {
    /// IPv4 first, as hiredis did: `localhost` reaches a server bound to 127.0.0.1 also on
    /// hosts whose /etc/hosts lists `::1 localhost` first (glibc would put ::1 first there).
    @Test func localhostResolvesToItsIPv4AddressOnTheLoop() throws {
        let loop = try UVLoop()
        var outcome: Result<String, UVError>?
        try UVNameResolution.start(on: loop, host: "localhost") { outcome = $0 }
        #expect(outcome == nil, "answered before the loop ran")
        for _ in 0..<1_000 where outcome == nil { _ = loop.runOnce() }
        #expect(try outcome?.get() == "127.0.0.1")
        #expect(loop.runUntilIdle())
        try loop.close()
    }

    @Test func aNameThatCannotResolveFailsNamingTheResolversError() throws {
        let loop = try UVLoop()
        var outcome: Result<String, UVError>?
        // An empty name is refused by getaddrinfo itself, with no lookup sent anywhere.
        do {
            try UVNameResolution.start(on: loop, host: "") { outcome = $0 }
            for _ in 0..<1_000 where outcome == nil { _ = loop.runOnce() }
            guard case .failure(let error) = outcome else { throw UVError(code: 0, operation: "resolved \"\"") }
            #expect(error.name.hasPrefix("EAI_"), "\(error)")
            #expect(error.operation == "getaddrinfo()")
        } catch let error as UVError {
            // libuv may refuse the request before it starts: the same clear error, thrown.
            #expect(error.name.hasPrefix("EAI_") || error.name == "EINVAL", "\(error)")
        }
        #expect(loop.runUntilIdle())
        try loop.close()
    }

    @Test func aCancelledLookupNeverCallsBackAndEnds() throws {
        let loop = try UVLoop()
        var called = false
        weak var released: UVNameResolution?
        do {
            let resolution = try UVNameResolution.start(on: loop, host: "localhost") { _ in called = true }
            released = resolution
            resolution.cancel()
        }
        // libuv still calls back (cancelled, or resolved if the pool had started the lookup: then
        // only when the resolver answers, so wait on the loop, not a fixed count of passes): the
        // request lets go of itself then, and the loop has nothing left.
        for _ in 0..<1_000 where released != nil { _ = loop.runOnce() }
        #expect(loop.runUntilIdle())
        #expect(!called)
        #expect(released == nil)
        try loop.close()
    }
}
