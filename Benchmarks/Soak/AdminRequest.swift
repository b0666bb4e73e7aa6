import Foundation

/// A blocking HTTP/1.1 GET to the daemon's admin listener.
enum AdminRequest {
    /// Fetches `path` with `Connection: close`.
    /// - Returns: the status code, or nil when the connection failed or the answer did not
    ///   start with a status line within 10 seconds.
    static func get(_ path: String, port: Int) -> Int? {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 10) else { return nil }
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        // "HTTP/1.1 200 OK"
        let head = String(decoding: answer.prefix(12), as: UTF8.self)
        guard head.hasPrefix("HTTP/1."), head.count >= 12 else { return nil }
        return Int(head.dropFirst(9).prefix(3))
    }

    /// A TCP port free on 127.0.0.1 now (bound to port 0, then released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
