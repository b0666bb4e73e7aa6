import AdLoaderCore
import AdLoaderGRPC
import AdLoaderLogging
import AdLoaderService
import AdLoaderTestSupport
import AdLoaderWire
import AdSources

/// Fuzzes the gRPC transport's HTTP/2 session input: the bytes after the client preface go to
/// a real ``GRPCTransport`` connection (nghttp2 server session, the service, a synthetic
/// loader on a ``ManualClock``) over an in-memory stream, in chunks whose sizes come from the
/// input; then time passes (deadlines, parked borrows, idle timeout) and the client leaves.
///
/// Checks: nothing traps; everything the server wrote parses as a sequence of HTTP/2 frames
/// (9-byte headers, lengths within the default SETTINGS_MAX_FRAME_SIZE), starting with its
/// SETTINGS; once the client has gone, the service holds no open call and no parked borrow
/// (every stream's call was ended), and a second, well-formed connection on the same transport
/// is still answered.
///
/// Input layout: `[k] [k chunk sizes] [frames...]`; `k` is the first byte modulo 8.
public enum HTTP2SessionFuzz: FuzzTarget {
    public static let name = "http2-session"

    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let bytes = Array(input)
        let chunkCount = bytes.isEmpty ? 0 : Int(bytes[0] % 8)
        let sizes = bytes.dropFirst().prefix(chunkCount).map { Int($0) + 1 }
        let frames = Array(bytes.dropFirst(1 + sizes.count))

        let clock = ManualClock()
        let stack: (GRPCTransport, AdLoaderService, ManualDeferredWork)
        do {
            stack = try makeStack(clock: clock)
        } catch {
            throw FuzzFailure("cannot build the stack: \(error)")
        }
        let (transport, service, deferred) = stack
        let stream = InProcessStream()
        transport.accept(stream, peer: "fuzz")
        stream.clientSends(preface)
        var rest = frames[...]
        var index = 0
        while !rest.isEmpty {
            let size = sizes.isEmpty ? rest.count : sizes[index % sizes.count]
            stream.clientSends(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
            index += 1
            deferred.runPending()
            stream.clientReads()
        }
        clock.advance(by: .milliseconds(50))
        deferred.runPending()
        stream.clientReads()
        clock.advance(by: .seconds(2))
        deferred.runPending()
        stream.clientReads()
        let output = stream.takeReceived()
        try checkFrames(output)
        stream.clientClosesSending()
        deferred.runPending()
        try require(
            service.openCallCount == 0 && service.parkedBorrowCount == 0,
            "after the client left: \(service.openCallCount) open calls, \(service.parkedBorrowCount) parked borrows")

        // A well-behaved neighbour is still served.
        let neighbour = InProcessStream()
        transport.accept(neighbour, peer: "neighbour")
        neighbour.clientSends(preface + seedRequest(path: MethodName.stats, message: [], streamID: 1))
        deferred.runPending()
        neighbour.clientReads()
        let answer = neighbour.takeReceived()
        try checkFrames(answer)
        try require(containsHeaders(answer, streamID: 1), "the neighbour's Stats got no HEADERS: \(hex(answer))")
        transport.stop()
    }

    static func makeStack(clock: ManualClock) throws -> (GRPCTransport, AdLoaderService, ManualDeferredWork) {
        var feed = LoaderConfiguration(name: "default")
        feed.maximumRetainedAdvertisements = 4
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(10)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        let loader = try NativeAdvertisementLoader(
            loaders: [feed], sources: ["synthetic": source], clock: clock, scheduler: clock)
        var limits = ServerLimits()
        limits.idleTimeout = .seconds(1)
        limits.maxMessageSize = 4096
        let logger = Logger(level: .error)
        let service = AdLoaderService(loader: loader, limits: limits, clock: clock, scheduler: clock, logger: logger)
        let deferred = ManualDeferredWork()
        let transport = GRPCTransport(
            service: service, limits: limits, clock: clock, scheduler: clock, deferred: deferred, logger: logger)
        return (transport, service, deferred)
    }

    /// The server's output as HTTP/2 frames: whole frames, first a SETTINGS.
    static func checkFrames(_ output: [UInt8]) throws(FuzzFailure) {
        var index = 0
        var first = true
        while index < output.count {
            try require(output.count - index >= 9, "a partial frame header at \(index) of \(output.count)")
            let length = Int(output[index]) << 16 | Int(output[index + 1]) << 8 | Int(output[index + 2])
            let type = output[index + 3]
            try require(length <= 16_384, "a frame of \(length) bytes (type \(type)) above the default maximum")
            if first { try require(type == 4, "the server's first frame is type \(type), not SETTINGS") }
            first = false
            index += 9 + length
            try require(index <= output.count, "a frame ends past the output (\(index) of \(output.count))")
        }
    }

    /// Whether `output` holds a HEADERS frame on `streamID`.
    static func containsHeaders(_ output: [UInt8], streamID: UInt32) -> Bool {
        var index = 0
        while output.count - index >= 9 {
            let length = Int(output[index]) << 16 | Int(output[index + 1]) << 8 | Int(output[index + 2])
            let stream =
                UInt32(output[index + 5] & 0x7f) << 24 | UInt32(output[index + 6]) << 16
                | UInt32(output[index + 7]) << 8 | UInt32(output[index + 8])
            if output[index + 3] == 1, stream == streamID { return true }
            index += 9 + length
        }
        return false
    }
}
