import Foundation

/// A TCP server on a free loopback port that answers every read with fixed bytes (garbage,
/// a wrong reply type, an error) and can close right away: what a broken or foreign "Redis"
/// does to the store. One thread accepts and serves connections one at a time; stop() ends it.
final class FakeRedisServer: @unchecked Sendable {
    // @unchecked: `listener` and `answer` are set before the thread starts and only read after.
    let port: Int
    private let listener: Int32
    private let answer: [UInt8]
    private let closeAfterAnswer: Bool
    private let thread: Thread

    init(answer: [UInt8], closeAfterAnswer: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Int32 in
                guard bind(fd, sa, length) == 0, listen(fd, 8) == 0 else { return -1 }
                return getsockname(fd, sa, &length)
            }
        }
        guard bound == 0 else {
            close(fd)
            throw RedisServer.RedisServerError(message: "fake server: cannot listen")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.answer = answer
        self.closeAfterAnswer = closeAfterAnswer
        let (listener, answer, closeAfterAnswer) = (fd, answer, closeAfterAnswer)
        thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                var buffer = [UInt8](repeating: 0, count: 4_096)
                while read(client, &buffer, buffer.count) > 0 {
                    _ = answer.withUnsafeBytes { write(client, $0.baseAddress, answer.count) }
                    if closeAfterAnswer { break }
                }
                close(client)
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
