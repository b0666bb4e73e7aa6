/// The admin listener's limits, checked where bytes arrive; a client over one is answered
/// with an HTTP error and its connection closed, and no other connection notices.
public struct AdminLimits: Hashable, Sendable {
    /// Bytes of one request line plus its headers (names and values).
    public var maxRequestHeadBytes = 8 * 1024
    /// Header lines in one request.
    public var maxHeaderCount = 64
    /// Open admin connections; more are closed at once.
    public var maxConnections = 64
    /// From a request's first byte to its last header line; slower: 408 and close.
    public var requestTimeout: Duration = .seconds(5)
    /// A connection with no request under way that sends nothing this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// Answers queued and not yet taken by the client above which the connection stops being
    /// read until they drain (a client that pipelines without reading).
    public var maxUnsentOutput = 4 * 1024 * 1024

    public init() {}
}
