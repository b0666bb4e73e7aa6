public import AdLoaderModel
import AdLoaderWire

extension EndpointSet {
    /// The endpoint whose name derives replica index `index` (``LeaseReplica/index(forInstance:)``
    /// of `host:port` as written in the set: a replica's default instance name); nil when none.
    public func endpoint(forReplica index: Int) -> Endpoint? {
        endpoints.first { LeaseReplica.index(forInstance: $0.description) == index }
    }

    /// The endpoint that lent `leaseID`, by the replica index in its top bits; nil when the id
    /// names no replica of the set (index 0, or a configured `replicaIndex`).
    public func lender(of leaseID: UInt64) -> Endpoint? {
        endpoint(forReplica: LeaseReplica.index(ofLease: leaseID))
    }
}

extension AdLoaderClient {
    /// Returns a lease, following the server when it was lent by another replica of `fleet`:
    /// a NOT_FOUND "lease N was lent by replica R, ..." (PROTOCOL.md 7.3) is retried once on
    /// the endpoint of `fleet` whose name derives index R, over a connection opened for it.
    /// - Throws: `Status` as ``returnLease(_:shown:timeout:)``; the lender's own answer when
    ///   retried there; ``AdLoaderClientError`` when the lender cannot be reached.
    public func returnLease(
        _ leaseID: UInt64, shown: Bool, deviceIP: String = "", deviceUserAgent: String = "",
        retryingIn fleet: EndpointSet,
        token: String? = nil, timeout: Duration? = nil
    ) async throws -> ReturnOutcome? {
        try await followingLender(in: fleet, token: token) { client in
            try await client.returnLease(
                leaseID, shown: shown, deviceIP: deviceIP, deviceUserAgent: deviceUserAgent, timeout: timeout)
        }
    }

    /// Invalidates a lease (``invalidateLease(_:shown:reason:timeout:)``), following the server
    /// to the lending replica of `fleet` as ``returnLease(_:shown:deviceIP:deviceUserAgent:retryingIn:token:timeout:)``
    /// does: the lender is the one that removes the ad and blocks its creative.
    /// - Throws: `Status` as ``invalidateLease(_:shown:reason:timeout:)``; the lender's own
    ///   answer when retried there; ``AdLoaderClientError`` when the lender cannot be reached.
    public func invalidateLease(
        _ leaseID: UInt64, shown: Bool, reason: String, retryingIn fleet: EndpointSet,
        token: String? = nil, timeout: Duration? = nil
    ) async throws -> ReturnOutcome? {
        try await followingLender(in: fleet, token: token) { client in
            try await client.invalidateLease(leaseID, shown: shown, reason: reason, timeout: timeout)
        }
    }

    /// `call` on this connection; on a NOT_FOUND naming another replica of `fleet` as the
    /// lender, `call` once more on a connection to that replica.
    private func followingLender(
        in fleet: EndpointSet, token: String?, _ call: (AdLoaderClient) async throws -> ReturnOutcome?
    ) async throws -> ReturnOutcome? {
        do {
            return try await call(self)
        } catch let status as Status where status.code == .notFound {
            guard let lender = Self.lendingReplica(in: status.message), let target = fleet.endpoint(forReplica: lender),
                target != endpoint
            else { throw status }
            let other = try Self.connect(to: target, token: token)
            defer { other.close() }
            return try await call(other)
        }
    }

    /// R from a NOT_FOUND message "... was lent by replica R, not this one (replica S)".
    static func lendingReplica(in message: String) -> Int? {
        guard let range = message.range(of: "was lent by replica ") else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }
}
