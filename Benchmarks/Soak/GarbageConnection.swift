import Foundation

/// A blocking TCP connection that sends bytes a client never should, then waits for the
/// daemon to close it.
enum GarbageConnection {
    /// Connects, sends `bytes` (half the time also shutting down the write side), and reads
    /// until the daemon closes the connection.
    /// - Returns: whether it closed within 30 seconds (the partial-frame timeout is 10 s) (a refusal to connect counts as no).
    static func send(_ bytes: [UInt8], host: String, port: Int) -> Bool {
        guard host == "127.0.0.1", let fd = LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30) else {
            return false
        }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if Bool.random() { shutdown(fd, Int32(SHUT_WR)) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}
