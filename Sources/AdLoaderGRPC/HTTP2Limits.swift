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
    /// over it is answered RESOURCE_EXHAUSTED; one over twice it (or growing by more than 1 KiB
    /// after it went over) ends the connection with GOAWAY ENHANCE_YOUR_CALM, no more of its
    /// header block decoded (HPACK lets one byte stand for a 4 KB field).
    public var maxHeaderListSize = 8 * 1024
    /// The window over which the flood counters below count, in milliseconds.
    public var floodWindowMilliseconds: Int64 = 10_000
    /// RST_STREAM frames a client may send per window (rapid reset, CVE-2023-44487); one more
    /// → GOAWAY ENHANCE_YOUR_CALM and the connection closes. The same bound, counted apart,
    /// holds for the resets the server sends itself for stream errors (MadeYouReset,
    /// CVE-2025-8671).
    public var maxResetsPerWindow = 200
    /// SETTINGS, PING (not acks), PRIORITY, and empty DATA or HEADERS frames without
    /// END_STREAM a client may send per window; one more → GOAWAY ENHANCE_YOUR_CALM.
    public var maxControlFramesPerWindow = 500
    /// CONTINUATION frames accepted for one header block (nghttp2's option); more → the
    /// connection ends with a GOAWAY.
    public var maxContinuations = 8
    /// The most bytes of one connection's input nghttp2 works on in one turn. The rest waits,
    /// the connection not reading meanwhile, while the loop serves the other connections; it
    /// gets its next turn in the next loop iteration. A flood on one connection (provoked
    /// resets, header-table abuse, header lists far over the limit) then delays a neighbour's
    /// call by one turn of it, not by everything it sent at once (issue 28's neighbour rule).
    public var inputBytesPerTurn = 16 * 1024
    /// The most work one connection's input gets in one turn, in header fields decoded, a
    /// stream opened counting as ``streamWork`` of them; past it the rest waits (as above).
    /// Bytes alone do not measure it: 16 KiB of requests are ~200 calls.
    public var headerWorkPerTurn = 256
    /// What opening a stream counts toward ``headerWorkPerTurn``.
    public static let streamWork = 16
    /// The connection-level receive window (the stream windows keep HTTP/2's 64 KiB, ample
    /// for this service's small requests).
    public var connectionWindowSize = 1 << 20

    public init() {}
}
