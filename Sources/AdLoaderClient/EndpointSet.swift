/// Several daemons serving one fleet, chosen by affinity key the way nginx's
/// `hash $http_x_adloader_affinity consistent` upstream does (``ConsistentHashRing``), so that
/// framed-protocol clients and gRPC calls through nginx reach the same daemon for a key.
///
/// Name the endpoints exactly as nginx's `server` lines do, in the same order
/// (`127.0.0.1:7421,127.0.0.1:7422,127.0.0.1:7423`): the ring hashes those strings.
public struct EndpointSet: Sendable, Hashable {
    /// The gRPC metadata key clients send the affinity key in (nginx reads it as
    /// `$http_x_adloader_affinity`).
    public static let affinityMetadataKey = "x-adloader-affinity"

    /// The endpoints, in the order given.
    public let endpoints: [Endpoint]
    /// The ring over the endpoints' names as given.
    public let ring: ConsistentHashRing

    /// Parses a comma-separated list of `HOST:PORT` (or `[IPV6]:PORT`) endpoints.
    /// - Throws: ``AdLoaderClientError`` `.invalidEndpoint` for an empty list, a duplicate or an
    ///   endpoint that does not parse.
    public init(parsing text: String) throws(AdLoaderClientError) {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0).trimmingASCIIWhitespace()
        }
        try self.init(names: names)
    }

    /// - Parameter names: `HOST:PORT` endpoints, as on nginx's `server` lines.
    /// - Throws: ``AdLoaderClientError`` `.invalidEndpoint` for an empty list, an empty or
    ///   duplicate name, or one that does not parse (Unix sockets are not allowed: nginx hashes
    ///   them differently and they name no remote daemon).
    public init(names: [String]) throws(AdLoaderClientError) {
        guard !names.isEmpty, !(names.count == 1 && names[0].isEmpty) else {
            throw AdLoaderClientError(code: .invalidEndpoint, message: "no endpoints given")
        }
        var endpoints: [Endpoint] = []
        for name in names {
            guard !name.isEmpty else {
                throw AdLoaderClientError(code: .invalidEndpoint, message: "empty endpoint in the list")
            }
            let endpoint = try Endpoint(parsing: name)
            guard case .tcp = endpoint else {
                throw AdLoaderClientError(
                    code: .invalidEndpoint, message: "\"\(name)\": only HOST:PORT endpoints can be hashed")
            }
            guard !endpoints.contains(endpoint) else {
                throw AdLoaderClientError(code: .invalidEndpoint, message: "\"\(name)\" is listed twice")
            }
            endpoints.append(endpoint)
        }
        self.endpoints = endpoints
        ring = ConsistentHashRing(servers: names)
    }

    /// The endpoint that owns `key`: the one nginx picks while every server is up. For an
    /// empty key (nginx: round robin), the first endpoint.
    public func owner(of key: String) -> Endpoint { endpoints[ring.server(for: key) ?? 0] }

    /// Every endpoint in the order nginx tries them for `key` when servers fail.
    public func candidates(for key: String) -> [Endpoint] { ring.candidates(for: key).map { endpoints[$0] } }
}

extension AdLoaderClient {
    /// Connects to the daemon that owns `affinityKey` in `set`; when it cannot be reached, to
    /// the next along the ring, as nginx does with a failed server.
    /// - Parameters:
    ///   - affinityKey: the feed or user id; callers default it to the ad unit. Empty: the
    ///     endpoints in order.
    ///   - token, tls: as in ``connect(to:maximumMessageSize:token:tls:)`` (one TLS setting for
    ///     every endpoint; the server name defaults to each endpoint's host).
    /// - Throws: the last endpoint's ``AdLoaderClientError`` when none can be reached.
    public static func connect(
        to set: EndpointSet, affinityKey: String, maximumMessageSize: Int = 4 << 20, token: String? = nil,
        tls: ClientTLS? = nil
    ) throws -> AdLoaderClient {
        var failures: [String] = []
        for endpoint in set.candidates(for: affinityKey) {
            do {
                return try connect(to: endpoint, maximumMessageSize: maximumMessageSize, token: token, tls: tls)
            } catch let error as AdLoaderClientError {
                failures.append("\(endpoint): \(error.message)")
            }
        }
        throw AdLoaderClientError(
            code: .connectFailed, message: "no endpoint reachable (\(failures.joined(separator: "; ")))")
    }
}

extension String {
    fileprivate func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}
