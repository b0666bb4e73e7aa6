#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking POSIX socket calls used by ``ClientConnection``.
enum Socket {
    /// Opens a connected stream socket to `endpoint`.
    static func connect(to endpoint: Endpoint) throws(AdLoaderClientError) -> Int32 {
        switch endpoint {
        case .tcp(let host, let port): try connectTCP(host: host, port: port)
        case .unix(let path): try connectUnix(path: path)
        }
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    private static func connectTCP(host: String, port: Int) throws(AdLoaderClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw AdLoaderClientError(
                code: .connectFailed, message: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = 0
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            lastError = errno
            close(fd)
        }
        throw AdLoaderClientError(
            code: .connectFailed, message: "cannot connect to \(host):\(port): \(errorText(lastError))")
    }

    private static func connectUnix(path: String) throws(AdLoaderClientError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard bytes.count < capacity else {
            throw AdLoaderClientError(
                code: .invalidEndpoint, message: "Unix socket path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        #if canImport(Glibc)
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else {
            throw AdLoaderClientError(code: .connectFailed, message: "socket: \(errorText(errno))")
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw AdLoaderClientError(
                code: .connectFailed, message: "cannot connect to unix:\(path): \(errorText(code))")
        }
        return fd
    }

    /// Closes a descriptor not handed to a connection (a failed TLS handshake).
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Writes all of `bytes`; false when the socket is broken. Never raises SIGPIPE.
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
