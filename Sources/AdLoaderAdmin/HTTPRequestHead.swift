/// One HTTP/1.x request as the admin server sees it: the request line and the headers.
/// Bodies are never accepted (the admin server serves GET only).
public struct HTTPRequestHead: Hashable, Sendable {
    /// One header line; names keep the client's case.
    public struct Header: Hashable, Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The method as sent, e.g. "GET".
    public var method: String
    /// The request target as sent, e.g. "/metrics?x=1".
    public var target: String
    public var headers: [Header]
    /// HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`.
    public var keepAlive: Bool

    public init(method: String, target: String, headers: [Header] = [], keepAlive: Bool = true) {
        self.method = method
        self.target = target
        self.headers = headers
        self.keepAlive = keepAlive
    }

    /// The target without its query, e.g. "/metrics".
    public var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }

    /// The value of the first header named `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
