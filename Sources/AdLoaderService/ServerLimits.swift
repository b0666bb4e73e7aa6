public import AdLoaderCore

/// Every limit the server enforces, with safe defaults; each is checked where the bytes
/// arrive and only the offending connection pays.
public struct ServerLimits: Hashable, Sendable {
    /// The largest framed message accepted (the length prefix is checked before any
    /// allocation); bigger → RESOURCE_EXHAUSTED, then the connection closes. A Stats answer
    /// above it (many pools) is refused with RESOURCE_EXHAUSTED instead of being sent, since
    /// a client applying the same limit would drop the connection; the connection stays open.
    public var maxMessageSize = 4 * 1024 * 1024
    /// Open client connections, all listeners together; a connection over it is closed at once.
    public var maxConnections = 1024
    /// Calls (including Watch streams and parked borrows) open on one connection; one more →
    /// RESOURCE_EXHAUSTED for that call.
    public var maxCallsInFlightPerConnection = 128
    /// Borrows parked waiting for an ad, all connections together; one more →
    /// RESOURCE_EXHAUSTED for that borrow.
    public var maxParkedBorrows = 10_000
    /// A connection with no call open that sends nothing for this long is closed.
    public var idleTimeout: Duration = .seconds(300)
    /// A connection holding part of a frame (or of the preface) for this long with no frame
    /// completing is closed; the clock does not run while the server has paused reading.
    public var partialFrameTimeout: Duration = .seconds(10)
    /// Answers waiting for a client that does not read: above this the server stops reading
    /// and handling that client's requests until its unsent output drains to half; when it
    /// reaches twice this plus ``maxMessageSize`` (possible only through Watch events and
    /// parked calls completing) the connection is closed. 1 MiB (Envoy's per-connection buffer
    /// limit): 8 MiB let one client that does not read (or, over HTTP/2, keeps its window
    /// closed) grow the daemon by 8 MiB, and 1024 of them by 8 GiB (issue 28's abuse tests).
    public var maxUnsentOutputPerConnection = 1024 * 1024
    /// On SIGTERM/SIGINT, the longest wait for clients to close their connections after the
    /// shutdown announcement; calls arriving meanwhile are answered UNAVAILABLE.
    public var shutdownGracePeriod: Duration = .seconds(10)

    /// The longest `ad_unit_id`, `loader` or `slot_key` (and Stats/Watch filter) accepted, in
    /// UTF-8 bytes; longer → INVALID_ARGUMENT naming the field and the limit, before any pool is
    /// created (an ad unit id also travels upstream).
    public var maxIdentifierLength = 128

    /// The daemon-wide memory budget: ads loaded (available or leased) plus asked for, every
    /// loader and pool together. Beyond it pools stop buying (a top-up asks for what fits, the
    /// pool is reported held back: `memory_budget`); ads already held stay. The default,
    /// 1,000,000 ads, is about 1.6 GiB at the measured 1,677 B per native ad with its content
    /// (BENCHMARKS.md section 3): room for ten busy feeds' stock.
    public var maximumAds = 1_000_000

    public init() {}

    /// Checks every limit; the error names the first one out of range.
    /// - Throws: ``ConfigError`` with `field` such as `limits.maxConnections`.
    public func validate() throws(ConfigError) {
        func fail(_ field: String, _ message: String) -> ConfigError {
            ConfigError(field: "limits.\(field)", message: message)
        }
        if !(16...(1 << 30)).contains(maxMessageSize) {
            throw fail("maxMessageSize", "must be 16...1073741824 bytes, got \(maxMessageSize)")
        }
        if maxConnections < 1 { throw fail("maxConnections", "must be at least 1, got \(maxConnections)") }
        if maxCallsInFlightPerConnection < 1 {
            throw fail("maxCallsInFlightPerConnection", "must be at least 1, got \(maxCallsInFlightPerConnection)")
        }
        if maxParkedBorrows < 0 { throw fail("maxParkedBorrows", "must not be negative, got \(maxParkedBorrows)") }
        if idleTimeout <= .zero { throw fail("idleTimeout", "must be positive") }
        if partialFrameTimeout <= .zero { throw fail("partialFrameTimeout", "must be positive") }
        if maxUnsentOutputPerConnection < 1024 {
            throw fail(
                "maxUnsentOutputPerConnection", "must be at least 1024 bytes, got \(maxUnsentOutputPerConnection)")
        }
        if !(1...65_536).contains(maxIdentifierLength) {
            throw fail("maxIdentifierLength", "must be 1...65536 bytes, got \(maxIdentifierLength)")
        }
        if shutdownGracePeriod < .zero { throw fail("shutdownGracePeriod", "must not be negative") }
    }
}
