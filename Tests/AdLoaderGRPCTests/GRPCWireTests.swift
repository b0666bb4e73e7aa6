import Testing

@testable import AdLoaderGRPC

@Suite struct GRPCWireTests {
    @Test(arguments: [
        ("1H", Duration.seconds(3600)), ("2M", .seconds(120)), ("3S", .seconds(3)), ("250m", .milliseconds(250)),
        ("7u", .microseconds(7)), ("9n", .nanoseconds(9)), ("99999999S", .seconds(99_999_999)),
    ])
    func timeoutsParse(_ value: String, _ expected: Duration) {
        #expect(GRPCWire.parseTimeout(value) == expected)
    }

    @Test(arguments: ["", "S", "10", "1s", "123456789S", "-1S", "1.5S", " 1S", "1SS", "１S"])
    func malformedTimeoutsAreRefused(_ value: String) {
        #expect(GRPCWire.parseTimeout(value) == nil)
    }

    @Test func statusMessagesArePercentEncoded() {
        #expect(GRPCWire.percentEncode("plain text: ok") == "plain text: ok")
        #expect(GRPCWire.percentEncode("100%") == "100%25")
        #expect(GRPCWire.percentEncode("é\n") == "%C3%A9%0A")
        #expect(GRPCWire.percentEncode("") == "")
    }

    @Test(arguments: [
        ("application/grpc", true), ("application/grpc+proto", true), ("application/grpc; charset=utf-8", true),
        ("Application/GRPC", true), ("application/grpc+json", false), ("application/grpcx", false),
        ("application/json", false), ("", false),
    ])
    func contentTypes(_ value: String, _ accepted: Bool) {
        #expect(GRPCWire.isGRPCContentType(value) == accepted)
    }
}

@Suite struct FloodGuardTests {
    var limits: HTTP2Limits {
        var limits = HTTP2Limits()
        limits.maxResetsPerWindow = 3
        limits.maxControlFramesPerWindow = 2
        limits.floodWindowMilliseconds = 1000
        return limits
    }

    @Test func resetsPastTheLimitInOneWindowAreAFlood() {
        var guardian = FloodGuard(limits: limits)
        for at in [0, 10, 20] as [Int64] { #expect(guardian.count(.reset, at: at) == nil) }
        #expect(guardian.count(.reset, at: 30)?.contains("stream resets") == true)
    }

    /// MadeYouReset: the resets the server sends for stream errors have the client's budget, and
    /// their own count (client resets do not use it up).
    @Test func resetsSentPastTheLimitInOneWindowAreAFlood() {
        var guardian = FloodGuard(limits: limits)
        for at in [0, 10, 20] as [Int64] {
            #expect(guardian.count(.sentReset, at: at) == nil)
            #expect(guardian.count(.reset, at: at) == nil)
        }
        #expect(guardian.count(.sentReset, at: 30)?.contains("stream resets sent to the client") == true)
        #expect(guardian.count(.sentReset, at: 1030) == nil)  // a new window
    }

    @Test func theCountRestartsWithEachWindow() {
        var guardian = FloodGuard(limits: limits)
        for window in 0..<5 as Range<Int64> {
            for step in 0..<3 as Range<Int64> { #expect(guardian.count(.reset, at: window * 1000 + step) == nil) }
            for step in 0..<2 as Range<Int64> { #expect(guardian.count(.control, at: window * 1000 + step) == nil) }
        }
        #expect(guardian.count(.control, at: 4999)?.contains("PING") == true)
    }
}
