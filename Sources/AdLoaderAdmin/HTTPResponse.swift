/// One answer of the admin server: a status, a content type and a complete body (no
/// streaming: every admin answer is small and built at once on the loop).
public struct HTTPResponse: Hashable, Sendable {
    public var status: HTTPStatus
    public var contentType: String
    public var body: [UInt8]
    /// Extra header lines (name, value), e.g. `Allow` or `Cache-Control`.
    public var headers: [HTTPRequestHead.Header]

    public init(
        status: HTTPStatus = .ok, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
        headers: [HTTPRequestHead.Header] = []
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A text answer.
    public init(status: HTTPStatus = .ok, contentType: String = "text/plain; charset=utf-8", text: String) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8))
    }

    /// The bytes on the wire: status line, headers (with Content-Length, and `Connection:
    /// close` when the connection ends after this answer), blank line, body. A HEAD-less
    /// server: the body is always sent.
    public func encoded(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        head += "Content-Type: \(contentType)\r\n"
        head += "Content-Length: \(body.count)\r\n"
        head += "Cache-Control: no-store\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
