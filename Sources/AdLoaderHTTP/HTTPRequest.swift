/// One HTTP request as an ``HTTPClient`` sends it.
public struct HTTPRequest: Hashable, Sendable {
    public enum Method: String, Hashable, Sendable {
        case get = "GET"
        case post = "POST"
    }

    public var method: Method
    public var url: String
    /// Sent as they are, in order (`content-type`, `x-openrtb-version`, ...).
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    /// The whole exchange, connecting included; past it the request fails ``HTTPError/Code/timedOut``.
    public var timeout: Duration
    /// Connecting (TCP and TLS); past it the request fails ``HTTPError/Code/timedOut``.
    public var connectTimeout: Duration

    public init(
        method: Method = .get, url: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
        timeout: Duration = .seconds(1), connectTimeout: Duration = .milliseconds(500)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }
}

/// One header line: a name and its value.
public struct HTTPHeader: Hashable, Sendable {
    /// As sent; in a response, lowercased.
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
