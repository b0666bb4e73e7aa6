/// The answer to a prefetch.
public struct PrefetchResult: Hashable, Sendable {
    public var available: Int
    public var inFlight: Int
    /// Ads this call asked for upstream.
    public var requested: Int

    public init(available: Int, inFlight: Int, requested: Int) {
        self.available = available
        self.inFlight = inFlight
        self.requested = requested
    }
}
