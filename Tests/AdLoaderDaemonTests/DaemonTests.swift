import AdLoaderCore
import Foundation
import Testing

@testable import AdLoaderDaemon
@testable import AdLoaderLogging
@testable import AdLoaderUV

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DaemonTests {
    /// A setup that fails half-way closes what it built through the owners, so their close
    /// callbacks run: the handles' retains are given back and the loop closes.
    @Test func abandoningAHalfBuiltLoopClosesItsHandlesThroughTheirOwners() throws {
        let loop = try UVLoop()
        var clock: LoopClock? = try LoopClock(loop: loop)
        var idle: UVIdle? = try UVIdle(loop: loop)
        weak let weakIdle = idle
        weak let weakClock = clock
        idle?.start {}
        let closed = Daemon.abandon(loop, closing: [clock!.close, idle!.close])
        clock = nil
        idle = nil
        #expect(closed, "uv_loop_close failed")
        #expect(weakIdle == nil, "the idle handle's owner was never released")
        #expect(weakClock == nil, "the clock was never released")
    }

    /// A listener that cannot bind fails start(); run() then closes every handle and the loop.
    @Test func aPortInUseFailsStartAndTheLoopStillClosesCleanly() throws {
        var configuration = ServerConfiguration()
        // Not about the pool store: no file in the working directory, none shared by two daemons.
        configuration.poolStore.type = .off
        configuration.listeners.port = 0
        let logger = Logger(level: .error)
        let first = try Daemon(configuration: configuration, logger: logger)
        let addresses = try first.start()
        guard case .tcp(_, let port)? = addresses.first else {
            Issue.record("no TCP address")
            return
        }
        configuration.listeners.port = port
        let second = try Daemon(configuration: configuration, logger: logger)
        let error = try #require(throws: ListenerError.self) { try second.start() }
        #expect(error.setting == "listeners.port")
        #expect(error.error.name == "EADDRINUSE")
        #expect(second.run() == 0, "the loop of the failed server did not close")
        first.beginShutdown(reason: "test")
        #expect(first.run() == 0)
    }

    /// Two daemons never share one pool store: the second one's construction fails on the
    /// store's lock, naming the setting, the file and the holder; the first is unharmed.
    @Test func aSecondDaemonOnTheSamePoolStoreIsRefused() throws {
        let path = "/tmp/adloaderd-daemon-test-\(getpid())-pools.sqlite"
        defer { for suffix in ["", "-wal", "-shm", ".lock", ".journal"] { unlink(path + suffix) } }
        var configuration = ServerConfiguration()
        configuration.listeners.port = 0
        configuration.poolStore.sqlitePath = path
        let logger = Logger(level: .error)
        let first = try Daemon(configuration: configuration, logger: logger)
        try first.start()
        let error = try #require(throws: ConfigError.self) {
            _ = try Daemon(configuration: configuration, logger: logger)
        }
        #expect(error.field == "poolStore.sqlitePath")
        #expect(error.message.contains(path) && error.message.contains("pid \(getpid())"))
        first.beginShutdown(reason: "test")
        #expect(first.run() == 0)
        // Its stop released the lock: the next daemon on the store starts.
        let third = try Daemon(configuration: configuration, logger: logger)
        try third.start()
        third.beginShutdown(reason: "test")
        #expect(third.run() == 0)
    }

    /// Redis TLS files are read at the start: one that cannot be used stops the daemon there,
    /// naming the setting and the file, for the cap store (opened with an appOpen loader) and
    /// for the Redis pool store (before Redis is even asked).
    @Test func aRedisTLSFileThatCannotBeUsedStopsTheStartNamingTheSetting() throws {
        let missing = "/tmp/adloaderd-daemon-test-\(getpid())-missing.pem"
        let notPEM = "/tmp/adloaderd-daemon-test-\(getpid())-not.pem"
        #expect(FileManager.default.createFile(atPath: notPEM, contents: Data("not a certificate\n".utf8)))
        defer { unlink(notPEM) }
        var configuration = ServerConfiguration()
        configuration.listeners.port = 0
        configuration.poolStore.type = .off
        var splash = LoaderConfiguration(name: "splash")
        splash.format = .appOpen
        configuration.loaders = [splash]
        configuration.capStore.type = .redis
        configuration.capStore.redisTLS = true
        configuration.capStore.redisTLSCAFile = missing
        let logger = Logger(level: .error)
        let unreadable = try #require(throws: ConfigError.self) {
            _ = try Daemon(configuration: configuration, logger: logger)
        }
        #expect(unreadable.field == "capStore.redisTLSCAFile")
        #expect(unreadable.message.contains("cannot read \(missing)"), "\(unreadable)")
        configuration.capStore.redisTLSCAFile = notPEM
        let garbage = try #require(throws: ConfigError.self) {
            _ = try Daemon(configuration: configuration, logger: logger)
        }
        #expect(garbage.field == "capStore.redisTLSCAFile" && garbage.message.contains("no PEM CA"), "\(garbage)")
        // The pool store: the same settings, refused before connecting.
        configuration.loaders = [LoaderConfiguration(name: "feed")]
        configuration.capStore.redisTLSCAFile = ""
        configuration.capStore.redisTLSCertificateFile = notPEM
        configuration.capStore.redisTLSKeyFile = missing
        configuration.poolStore.type = .redis
        configuration.listeners.instanceName = "tls-test"
        let key = try #require(throws: ConfigError.self) {
            _ = try Daemon(configuration: configuration, logger: logger)
        }
        #expect(key.field == "capStore.redisTLSKeyFile" && key.message.contains(missing), "\(key)")
    }

    /// R7: which listener failed is a typed field, not a guess from the error text.
    @Test func aUnixSocketInUseFailsStartNamingItsSetting() throws {
        let path = "/tmp/adloaderd-daemon-test-\(getpid()).sock"
        var configuration = ServerConfiguration()
        // Not about the pool store: no file in the working directory, none shared by two daemons.
        configuration.poolStore.type = .off
        configuration.listeners.port = 0
        configuration.listeners.unixSocket = path
        let logger = Logger(level: .error)
        let first = try Daemon(configuration: configuration, logger: logger)
        try first.start()
        let second = try Daemon(configuration: configuration, logger: logger)
        let error = try #require(throws: ListenerError.self) { try second.start() }
        #expect(error.setting == "listeners.unixSocket")
        #expect(error.address == .unix(path: path))
        #expect(second.run() == 0)
        first.beginShutdown(reason: "test")
        #expect(first.run() == 0)
        #expect(access(path, F_OK) != 0, "the socket file was left behind")
    }

    /// R3: the shutdown is bounded. A handle no part closes (here a repeating timer, which kept
    /// the old `while runNoWait() {}` spinning forever) is closed by force and logged, and the
    /// exit status says so.
    @Test func aHandleNobodyClosesIsClosedByForceAndLoggedAndTheStatusIsOne() throws {
        var configuration = ServerConfiguration()
        // Not about the pool store: no file in the working directory, none shared by two daemons.
        configuration.poolStore.type = .off
        configuration.listeners.port = 0
        let handler = CapturingLogHandler()
        let daemon = try Daemon(configuration: configuration, logger: Logger(level: .info, handler: handler))
        try daemon.start()
        let stray = try UVTimer(loop: daemon.loop)
        stray.start(timeout: 0, repeat: 1) {}
        daemon.beginShutdown(reason: "test")
        #expect(daemon.run() == 1)
        #expect(stray.isClosing)
        let forced = handler.lines.filter { $0.contains("handles left open at shutdown were closed by force") }
        #expect(forced.count == 1)
        #expect(forced.first?.contains("timer") == true)
    }

    @Test func aCleanShutdownLeavesNothingToCloseByForce() throws {
        var configuration = ServerConfiguration()
        // Not about the pool store: no file in the working directory, none shared by two daemons.
        configuration.poolStore.type = .off
        configuration.listeners.port = 0
        let handler = CapturingLogHandler()
        let daemon = try Daemon(configuration: configuration, logger: Logger(level: .info, handler: handler))
        try daemon.start()
        daemon.beginShutdown(reason: "test")
        #expect(daemon.run() == 0)
        #expect(!handler.lines.contains { $0.contains("closed by force") })
        #expect(handler.lines.last?.contains("\"stopped\"") == true)
    }

    /// R5: the Unix socket file is created with its final mode (umask narrowed around bind, so
    /// no wider mode is ever visible), and the process umask is restored.
    @Test func aUnixSocketIsCreatedWithItsFinalModeAndTheUmaskIsRestored() throws {
        let directory = "/tmp/adloaderd-mode-test-\(getpid())"
        mkdir(directory, 0o700)
        defer { rmdir(directory) }
        let path = directory + "/daemon.sock"
        let loop = try UVLoop()
        let pipe = try UVPipeHandle(loop: loop)
        let before = umask(0o022)
        defer { umask(before) }
        // A chmod after bind would show as an attribute change of the file.
        let watcher = inotify_init1(Int32(IN_NONBLOCK))
        #expect(watcher >= 0)
        defer { close(watcher) }
        #expect(inotify_add_watch(watcher, directory, UInt32(IN_ATTRIB)) >= 0)
        try pipe.bind(path: path, mode: 0o600)
        var event = [UInt8](repeating: 0, count: 4_096)
        let read = event.withUnsafeMutableBytes { Glibc.read(watcher, $0.baseAddress, $0.count) }
        #expect(read < 0 && errno == EAGAIN, "the socket's mode was changed after it was created")
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        let current = umask(0o022)
        #expect(current == 0o022, "umask not restored")
        pipe.close()
        unlink(path)
        _ = loop.runUntilIdle()
        try loop.close()
    }
}
