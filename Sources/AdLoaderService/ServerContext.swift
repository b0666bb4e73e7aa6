import AdLoaderCore
public import AdLoaderWire

/// What every transport of one server shares: the service, one connection set across
/// transports with its limit, the admission step every call goes through, the metadata
/// every answer carries and the wire-level cache of encoded ads.
///
/// A transport (``ServerTransport``) knows its own bytes; it asks this object whether a
/// connection may open and whether a call may start, in the same order on every transport
/// (PROTOCOL.md 5.2), so that limits, auth and the metrics of refusals cannot drift apart.
///
/// - Important: loop-confined, like the service.
public final class ServerContext {
    public let service: AdLoaderService
    public let limits: ServerLimits
    /// Encodings of lent ads, shared by every connection of every transport; an ad is
    /// forgotten when it leaves the loader for good (``NativeAdvertisementLoader/onAdRetired``).
    public let adEncodings: EncodedAdCache
    /// Metadata sent with every answer, as gRPC response headers: the service's
    /// (``AdLoaderService/responseMetadata``, e.g. `x-adloader-instance`).
    public var responseMetadata: CallMetadata { service.responseMetadata }
    /// Called by every transport right before it hands answers to a socket: the pool store's
    /// write barrier (the journal of the leases those answers carry is written first, so that
    /// a crash after an answer left never lends its ad again). Nil: nothing to wait for.
    @exclusivity(unchecked) public var beforeAnswersLeave: (() -> Void)?
    /// Set with ``beforeAnswersLeave``: a transport that can hands a read callback's answers to
    /// the socket at the end of the loop pass, with every other connection's, so that the
    /// barrier costs one journal write per pass rather than one per connection read.
    @exclusivity(unchecked) public var answersLeaveAtTheEndOfThePass = false
    // Loop-confined, and no method holds an access across a call that re-enters it.
    @exclusivity(unchecked) public private(set) var connectionCount = 0
    @exclusivity(unchecked) private var countsByTransport: [String: Int] = [:]
    @exclusivity(unchecked) private var refusedByTransport: [String: UInt64] = [:]
    /// Calls admitted with each token of the service's authenticator, by its index there.
    @exclusivity(unchecked) private var callsByToken: [UInt64] = []
    /// Counts of token names no longer configured (or not yet by index after a reload).
    @exclusivity(unchecked) private var earlierCallsByName: [String: UInt64] = [:]

    /// - Parameters:
    ///   - service: where every transport's calls go.
    ///   - limits: ``ServerLimits/maxConnections`` (all transports together) and
    ///     ``ServerLimits/maxCallsInFlightPerConnection`` are applied here.
    public init(service: AdLoaderService, limits: ServerLimits, adEncodings: EncodedAdCache = EncodedAdCache()) {
        self.service = service
        self.limits = limits
        self.adEncodings = adEncodings
        service.loader.onAdRetired = { [adEncodings] in adEncodings.forget(id: $0.id) }
    }

    // MARK: Connections

    /// The admission of a new connection: nil when it may open (it is counted until
    /// ``connectionClosed(transport:)``), else the status it is refused with.
    /// - Parameters:
    ///   - transport: the transport's name, for the count by transport.
    ///   - draining: whether that transport is shutting down.
    public func admitConnection(transport: String, draining: Bool) -> Status? {
        if draining {
            refusedByTransport[transport, default: 0] += 1
            return Status(code: .unavailable, message: "server shutting down")
        }
        if connectionCount >= limits.maxConnections {
            refusedByTransport[transport, default: 0] += 1
            return Status(code: .resourceExhausted, message: "connections: limit of \(limits.maxConnections) reached")
        }
        connectionCount += 1
        countsByTransport[transport, default: 0] += 1
        return nil
    }

    /// A connection admitted by ``admitConnection(transport:draining:)`` closed.
    public func connectionClosed(transport: String) {
        connectionCount -= 1
        countsByTransport[transport, default: 0] -= 1
    }

    /// Connections open now on one transport.
    public func connectionCount(transport: String) -> Int { countsByTransport[transport] ?? 0 }

    /// Connections refused so far on one transport (limit or shutdown).
    public func connectionsRefused(transport: String) -> UInt64 { refusedByTransport[transport] ?? 0 }

    // MARK: Calls

    /// The admission step of a call, after the transport's own checks of its call id: the
    /// calls-in-flight limit, then the method, then the token (PROTOCOL.md 5.2 and 11.6).
    /// The request message is decoded only after this passes.
    /// - Parameters:
    ///   - methodIsKnown: whether the method is one the service serves.
    ///   - callsInFlight: the connection's calls in flight, this one not included.
    ///   - needsToken: false for the calls that answer without a token (gRPC health, for probes).
    /// - Returns: nil to go on, else the status the call is refused with (report it with
    ///   ``callRefused(method:code:)``).
    @inline(__always)
    public func admitCall(
        method: String, methodIsKnown: Bool, callsInFlight: Int, authorization: String?, peerIsLocal: Bool,
        needsToken: Bool = true
    ) -> Status? {
        let limit = limits.maxCallsInFlightPerConnection
        if callsInFlight >= limit {
            return Status(code: .resourceExhausted, message: "calls in flight: limit of \(limit) reached")
        }
        if !methodIsKnown { return Status(code: .unimplemented, message: "unknown method \"\(method)\"") }
        guard needsToken else { return nil }
        let (refusal, caller) = service.authenticator.identify(authorization, peerIsLocal: peerIsLocal)
        if let caller {
            if caller >= callsByToken.count { callsByToken += repeatElement(0, count: caller + 1 - callsByToken.count) }
            callsByToken[caller] &+= 1
        }
        return refusal
    }

    /// Replaces the tokens (a reload): later calls are checked against `authenticator`, calls
    /// of connections opened with a removed token included. Counts by name carry over.
    public func replaceAuthenticator(_ authenticator: CallAuthenticator) {
        var carried = callsByName
        service.authenticator = authenticator
        // A name given to several tokens (old and new during a rotation) carries its count once.
        callsByToken = authenticator.names.map { carried.removeValue(forKey: $0) ?? 0 }
        earlierCallsByName = carried
    }

    /// Calls admitted with a valid token, by the token's name (configured names, and the
    /// names of tokens removed by a reload that had calls).
    public var callsByName: [String: UInt64] {
        var result = earlierCallsByName
        for (index, name) in service.authenticator.names.enumerated() {
            result[name, default: 0] += index < callsByToken.count ? callsByToken[index] : 0
        }
        return result
    }

    /// A transport refused a call before handing it to the service: counted with the others.
    public func callRefused(method: String, code: Status.Code) {
        service.callRefused(method: method, code: code)
    }
}
