/// What an ``HTTPClient`` received: any status, 1xx aside, is a response (4xx and 5xx included).
public struct HTTPResponse: Hashable, Sendable {
    public var status: Int
    /// The final response's headers, names lowercased, in order.
    public var headers: [HTTPHeader]
    /// The body, decoded (gzip and deflate are undone by the client).
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header called `name` (any case), if any.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }
}
