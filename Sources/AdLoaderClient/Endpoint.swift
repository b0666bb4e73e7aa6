/// Where an adloaderd listens.
public enum Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// A TCP listener; `host` is a name or an IPv4/IPv6 address.
    case tcp(host: String, port: Int)
    /// A Unix stream socket at `path`.
    case unix(path: String)

    /// The daemon's default listener, 127.0.0.1:7411.
    public static let `default` = Endpoint.tcp(host: "127.0.0.1", port: 7411)

    /// Parses `HOST:PORT`, `[IPV6]:PORT` or `unix:PATH`.
    /// - Throws: ``AdLoaderClientError`` `.invalidEndpoint` naming what is wrong.
    public init(parsing text: String) throws(AdLoaderClientError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else {
                throw AdLoaderClientError(code: .invalidEndpoint, message: "empty Unix socket path")
            }
            self = .unix(path: path)
            return
        }
        guard let colon = text.lastIndex(of: ":") else {
            throw AdLoaderClientError(code: .invalidEndpoint, message: "\"\(text)\" is not HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            throw AdLoaderClientError(
                code: .invalidEndpoint, message: "\"\(text)\" is not HOST:PORT with a port in 1...65535")
        }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}
