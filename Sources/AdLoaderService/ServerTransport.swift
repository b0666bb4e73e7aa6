public import AdLoaderWire

/// One kind of listener's connections (framed, gRPC, a later one): what the composition root
/// starts, counts and shuts down without knowing which transport it is.
///
/// Shutdown runs in two phases over every transport (``ShutdownSequence`` in the daemon):
/// ``announceShutdown(status:gracePeriod:announceLimit:whenAnnounced:)`` on all, then — once
/// every transport's clients know, the service having drained — ``drain(status:gracePeriod:whenDrained:)``
/// on all.
///
/// - Important: loop-confined.
public protocol ServerTransport: AnyObject {
    /// The transport's name in logs and metrics labels ("framed", "grpc").
    var name: String { get }
    /// Connections open now.
    var connectionCount: Int { get }
    /// Phase one: stop accepting and tell clients the server goes away, while calls go on
    /// being served. `whenAnnounced` is called once, when every client has had the chance to
    /// read it (at once for a transport with no such signal), at the latest at `announceLimit`.
    func announceShutdown(
        status: Status, gracePeriod: Duration, announceLimit: Duration, whenAnnounced: @escaping () -> Void)
    /// Phase two, after the service drained: close each connection when its client is done,
    /// all of them when `gracePeriod` ends; `whenDrained` is called once the last closed.
    func drain(status: Status, gracePeriod: Duration, whenDrained: @escaping () -> Void)
    /// Closes every connection now (a second signal).
    func closeAll(reason: String)
    /// Stops for good.
    func stop()
}
