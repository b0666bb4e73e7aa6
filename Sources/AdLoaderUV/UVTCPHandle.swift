internal import CLibUV

#if canImport(Glibc)
    import Glibc
#endif

/// A `uv_tcp_t`: a listening socket or an accepted connection.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
public final class UVTCPHandle: UVStream {
    /// - Throws: ``UVError`` when `uv_tcp_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_tcp_t>.size)
        try register(uv_tcp_init(loop.raw, pointer(as: uv_tcp_t.self)), "uv_tcp_init")
    }

    /// Binds to an IPv4 or IPv6 literal address.
    /// - Throws: ``UVError`` (`EINVAL` for a host that is not an IP literal, `EADDRINUSE`, ...).
    public func bind(host: String, port: Int) throws(UVError) {
        var storage = try Self.socketAddress(host: host, port: port)
        _ = try withUnsafePointer(to: &storage) { (pointer) throws(UVError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(UVError) in
                try uvCheck(uv_tcp_bind(self.pointer(as: uv_tcp_t.self), address, 0), "uv_tcp_bind")
            }
        }
    }

    /// Parses an IP literal into a socket address.
    /// - Throws: ``UVError`` with `EINVAL` when `host` is neither IPv4 nor IPv6.
    static func socketAddress(host: String, port: Int) throws(UVError) -> sockaddr_storage {
        var storage = sockaddr_storage()
        let result = withUnsafeMutablePointer(to: &storage) { pointer -> Int32 in
            if host.contains(":") {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    uv_ip6_addr(host, Int32(port), $0)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { uv_ip4_addr(host, Int32(port), $0) }
        }
        try uvCheck(result, "uv_ip_addr(\(host))")
        return storage
    }

    /// Whether `host` is an IPv4 or IPv6 literal a TCP listener can bind to.
    public static func isIPAddress(_ host: String) -> Bool {
        (try? socketAddress(host: host, port: 0)) != nil
    }

    /// Disables Nagle's algorithm: answers are small and latency matters.
    public func setNoDelay(_ enabled: Bool) {
        _ = uv_tcp_nodelay(pointer(as: uv_tcp_t.self), enabled ? 1 : 0)
    }

    /// The bound address, e.g. ("127.0.0.1", 7411).
    public var localAddress: (host: String, port: Int)? {
        address { uv_tcp_getsockname(self.pointer(as: uv_tcp_t.self), $0, $1) }
    }

    /// The peer's address.
    public var peerAddress: (host: String, port: Int)? {
        address { uv_tcp_getpeername(self.pointer(as: uv_tcp_t.self), $0, $1) }
    }

    private func address(
        _ get: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<Int32>) -> Int32
    ) -> (host: String, port: Int)? {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer -> (host: String, port: Int)? in
            let ok = pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { get($0, &length) } == 0
            guard ok else { return nil }
            var name = [CChar](repeating: 0, count: 64)
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    _ = uv_ip6_name(address, &name, name.count)
                    return (Self.string(name), Int(UInt16(bigEndian: address.pointee.sin6_port)))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                _ = uv_ip4_name(address, &name, name.count)
                return (Self.string(name), Int(UInt16(bigEndian: address.pointee.sin_port)))
            }
        }
    }

    private static func string(_ name: [CChar]) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
