import AdLoaderCore
import Testing

@testable import AdLoaderDaemon
@testable import AdLoaderLogging
@testable import AdLoaderUV

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
        #expect(throws: ListenerError.self) { try second.start() }
        #expect(second.run() == 0, "the loop of the failed server did not close")
        first.beginShutdown(reason: "test")
        #expect(first.run() == 0)
    }
}
