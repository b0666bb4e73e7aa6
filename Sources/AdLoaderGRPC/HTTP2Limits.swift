/// The HTTP/2 limits of the gRPC transport, with safe defaults; the limits about calls and
/// messages (message size, idle timeout, unsent output) are ``AdLoaderService/ServerLimits``'
/// and apply to both transports.
public struct HTTP2Limits: Hashable, Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised (nghttp2 sets none by itself); a stream
    /// over it is refused alone with RST_STREAM REFUSED_STREAM, the connection's other calls
    /// go on; each refusal counts toward ``maxResetsPerWindow``.
    public var maxConcurrentStreams = 100
    /// SETTINGS_MAX_HEADER_LIST_SIZE advertised and enforced on each request's headers (the
    /// decoded name and value lengths plus 32 per field, as RFC 9113 counts them); a request
    /// over it is answered RESOURCE_EXHAUSTED.
    public var maxHeaderListSize = 8 * 1024
    /// The window over which the flood counters below count, in milliseconds.
    public var floodWindowMilliseconds: Int64 = 10_000
    /// RST_STREAM frames a client may send per window (rapid reset, CVE-2023-44487); one more
    /// → GOAWAY ENHANCE_YOUR_CALM and the connection closes.
    public var maxResetsPerWindow = 200
    /// SETTINGS, PING (not acks), PRIORITY, and empty DATA or HEADERS frames without
    /// END_STREAM a client may send per window; one more → GOAWAY ENHANCE_YOUR_CALM.
    public var maxControlFramesPerWindow = 500
    /// CONTINUATION frames accepted for one header block (nghttp2's option); more → the
    /// connection ends with a GOAWAY.
    public var maxContinuations = 8
    /// The connection-level receive window (the stream windows keep HTTP/2's 64 KiB, ample
    /// for this service's small requests).
    public var connectionWindowSize = 1 << 20

    public init() {}
}
