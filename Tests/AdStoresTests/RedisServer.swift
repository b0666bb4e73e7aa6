import Foundation

/// A `redis-server` the test starts on a free loopback port (no persistence), and stops.
final class RedisServer {
    let port: Int
    /// Added to the command line (`--requirepass`, `--cluster-enabled yes`, ...).
    let extraArguments: [String]
    /// TLS only: `port` is the TLS port, the plaintext one is off.
    let tls: TestCertificates?
    private var process: Process?

    /// Starts redis-server on `port` (a free one when nil) and waits (bounded) until it answers.
    init(port: Int? = nil, extraArguments: [String] = [], tls: TestCertificates? = nil) throws {
        // The stores write to sockets a stopped server closed (a TLS close_notify, a command):
        // the daemon ignores SIGPIPE at start (Daemon.swift), and so must the test process.
        signal(SIGPIPE, SIG_IGN)
        self.port = try port ?? Self.freePort()
        self.extraArguments = extraArguments
        self.tls = tls
        try start()
    }

    /// The process id while it runs.
    var processIdentifier: Int32? { process?.processIdentifier }

    deinit { stop() }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        p.arguments =
            (tls?.serverArguments(port: port) ?? ["--port", String(port)]) + [
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
            ] + extraArguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // Wait until it accepts connections: at most 10 s.
        for _ in 0..<1_000 {
            if Self.accepts(port: port) { return }
            usleep(10_000)
        }
        stop()
        throw RedisServerError(message: "redis-server did not start on port \(port)")
    }

    func stop() {
        guard let p = process else { return }
        process = nil
        // SIGKILL: a child of the test runner inherits its blocked SIGTERM (NOTES-swift-c.md),
        // and the server keeps nothing worth a clean shutdown (no persistence).
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    struct RedisServerError: Error { var message: String }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Int32 in
                guard bind(fd, sa, length) == 0 else { return -1 }
                return getsockname(fd, sa, &length)
            }
        }
        guard bound == 0 else { throw RedisServerError(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
