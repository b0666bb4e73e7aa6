/// Where a listener accepts connections, as printed at start.
public enum ListenAddress: Hashable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}
