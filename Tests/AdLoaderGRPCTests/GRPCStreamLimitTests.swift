import AdLoaderTestSupport
import Testing

@testable import AdLoaderGRPC

/// SETTINGS_MAX_CONCURRENT_STREAMS: the limit the client is told, and a stream over it refused
/// alone (RST_STREAM REFUSED_STREAM) while the connection's other calls complete (issue 28).
@Suite struct GRPCStreamLimitTests {
    let clock = ManualClock()
    static let reset: UInt8 = 3
    static let settings: UInt8 = 4
    static let refusedStream: [UInt8] = [0, 0, 0, 7]

    /// The SETTINGS values the server sent in `bytes`, by identifier.
    static func settingsValues(_ bytes: [UInt8]) -> [Int: UInt32] {
        var values: [Int: UInt32] = [:]
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            if bytes[offset + 3] == settings, bytes[offset + 4] & 1 == 0 {
                var entry = offset + 9
                while entry + 6 <= offset + 9 + length {
                    let id = Int(bytes[entry]) << 8 | Int(bytes[entry + 1])
                    values[id] = bytes[(entry + 2)..<(entry + 6)].reduce(0) { $0 << 8 | UInt32($1) }
                    entry += 6
                }
            }
            offset += 9 + length
        }
        return values
    }

    @Test func theClientIsToldTheConfiguredLimit() throws {
        var limits = HTTP2Limits()
        limits.maxConcurrentStreams = 3
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: limits)
        let values = Self.settingsValues(h.preface)
        #expect(values[3] == 3)  // SETTINGS_MAX_CONCURRENT_STREAMS
        #expect(values[6] == UInt32(limits.maxHeaderListSize))
        // nghttp2 itself enforces more, so that it never ends the connection for it first.
        #expect(
            GRPCConnection.enforcedMaxConcurrentStreams(limits: limits) == UInt32(3 + limits.maxResetsPerWindow + 1))
    }

    @Test func aStreamOverTheLimitIsRefusedAndTheOthersAreServed() throws {
        var limits = HTTP2Limits()
        limits.maxConcurrentStreams = 2
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: limits)
        // Two Borrows park on the empty pool (the source answers in 100 ms); a third is over.
        let first = h.borrow("feed", waitMilliseconds: 120)
        let second = h.borrow("feed", waitMilliseconds: 120)
        let over = h.borrow("feed", waitMilliseconds: 120)
        let frames = h.frames()
        #expect(frames.contains { $0.type == Self.reset && $0.stream == over && $0.payload == Self.refusedStream })
        #expect(!frames.contains { $0.type == GRPCDrainTests.goAway })
        #expect(!frames.contains { $0.type == Self.reset && ($0.stream == first || $0.stream == second) })
        clock.advance(by: .milliseconds(100))
        let served = h.frames()
        #expect(GRPCDrainTests.served(first, in: served))
        #expect(GRPCDrainTests.served(second, in: served))
        #expect(!served.contains { $0.type == GRPCDrainTests.goAway })
        // The connection takes the client's retry.
        let retry = h.borrow("feed")
        #expect(GRPCDrainTests.served(retry, in: h.frames()))
    }

    @Test func aClientThatKeepsOpeningStreamsOverTheLimitGetsEnhanceYourCalm() throws {
        var limits = HTTP2Limits()
        limits.maxConcurrentStreams = 1
        limits.maxResetsPerWindow = 5
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: limits)
        for _ in 0..<8 { _ = h.borrow("feed", waitMilliseconds: 120) }
        let frames = h.frames()
        #expect(frames.filter { $0.type == Self.reset }.count == 5)
        let goAway = frames.first { $0.type == GRPCDrainTests.goAway }
        #expect(goAway?.payload[4..<8] == [0, 0, 0, 11][...])  // ENHANCE_YOUR_CALM, not PROTOCOL_ERROR
    }

    @Test func theAdvertisedLimitReplacesTheEnforcedOneInTheFirstSettingsFrame() {
        // SETTINGS (ack) first, then SETTINGS { 3: 300, 6: 8192 }.
        var bytes: [UInt8] = [0, 0, 0, 4, 1, 0, 0, 0, 0]
        bytes += [0, 0, 12, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 1, 0x2C, 0, 6, 0, 0, 0x20, 0]
        #expect(GRPCConnection.advertise(maxConcurrentStreams: 100, in: &bytes))
        #expect(Self.settingsValues(bytes) == [3: 100, 6: 8192])
        var none: [UInt8] = [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0x20, 0]
        #expect(!GRPCConnection.advertise(maxConcurrentStreams: 100, in: &none))
        var truncated: [UInt8] = [0, 0, 12, 4, 0, 0, 0, 0, 0, 0, 3]
        #expect(!GRPCConnection.advertise(maxConcurrentStreams: 100, in: &truncated))
    }
}
