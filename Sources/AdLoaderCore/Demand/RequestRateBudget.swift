/// An optional cap on the upstream request rate of one demand source, shared by every pool of
/// every loader that uses the source: a token bucket on the loader's clock.
///
/// The bucket holds up to one second's worth of requests (at least one) and refills at
/// ``maximumRequestsPerSecond``; every upstream request (a batch, a partial batch, a probe)
/// takes one token. A top-up that finds the bucket empty waits in the source's queue and is
/// sent as tokens come back, **on-screen first**: a pool with an on-screen borrow waiting
/// (one that missed or is parked) goes before pools that only refill their stock (sweeps,
/// expiries, returns, prefetches), and pools of the same kind take turns in arrival order.
/// So over any span of `d` seconds a source gets at most `capacity + rate × d` requests.
public struct RequestRateBudget: Hashable, Sendable {
    /// The largest rate accepted: beyond it a budget would never be short.
    public static let maximumRate = 1_000_000.0

    /// Upstream requests per second, sustained: > 0, at most ``maximumRate``.
    public var maximumRequestsPerSecond: Double

    public init(maximumRequestsPerSecond: Double) {
        self.maximumRequestsPerSecond = maximumRequestsPerSecond
    }

    /// Requests the bucket holds when full: one second's worth, at least 1.
    public var capacity: Double { max(1, maximumRequestsPerSecond.rounded(.down)) }

    /// Checks the rate.
    /// - Parameter field: the setting's dotted path (`sources.NAME.maximumRequestsPerSecond`).
    /// - Throws: ``ConfigError`` naming `field` when the rate is not a positive, finite number
    ///   up to ``maximumRate``.
    public func validate(field: String) throws(ConfigError) {
        let rate = maximumRequestsPerSecond
        guard rate.isFinite, rate > 0, rate <= Self.maximumRate else {
            throw ConfigError(
                field: field,
                message:
                    "must be a number above 0 and at most \(Int(Self.maximumRate)) requests per second, got \(rate)"
                    + " (leave it out for no budget)")
        }
    }
}
