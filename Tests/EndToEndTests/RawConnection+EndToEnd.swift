import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire

/// What the end-to-end tests add to the conformance suite's raw-frame client: connecting to
/// the daemon under test, and the few calls every test repeats.
extension RawConnection {
    /// How long one operation of a test's connection may take before the test fails.
    static let testTimeout: Duration = .seconds(10)

    /// Connects to the daemon on `127.0.0.1:port` and sends the preface unless told not to;
    /// the server's preface is checked by the first frame read.
    /// - Parameter receiveBuffer: when set, the socket's SO_RCVBUF (a client slow to read).
    static func open(port: Int, sendPreface: Bool = true, receiveBuffer: Int32? = nil) throws -> RawConnection {
        let connection = try connect(
            host: "127.0.0.1", port: port, timeout: testTimeout, receiveBufferSize: receiveBuffer)
        if sendPreface { try connection.sendPreface() }
        return connection
    }

    /// Connects to the daemon's Unix socket at `path` and sends the preface.
    static func open(unixPath path: String) throws -> RawConnection {
        let connection = try connect(unixPath: path, timeout: testTimeout)
        try connection.sendPreface()
        return connection
    }

    /// Stats of every pool.
    func stats() throws -> [PoolStats] {
        try call(MethodName.stats, StatsRequestMessage(), as: StatsResponseMessage.self).pools
    }

    /// Borrows one ad (waiting up to 5 s for it) and returns it unshown: the connection works.
    func borrowAndReturn(adUnit: String = "healthy") throws {
        let borrow = try call(
            MethodName.borrow, BorrowRequestMessage(adUnitID: adUnit, waitMilliseconds: 5_000),
            as: BorrowResponseMessage.self)
        guard let lease = borrow.lease else { throw DaemonError("no lease: \(borrow.outcome)") }
        _ = try call(
            MethodName.returnLease, ReturnRequestMessage(leaseID: lease.id, shown: false),
            as: ReturnResponseMessage.self)
    }

    /// Floods Stats requests (1 KiB of metadata each; each answer lists 20+ pools) from this
    /// client (give it a 4 KiB receive buffer) without reading, until the daemon logs that it
    /// paused reading. The stream may end inside a frame.
    /// - Returns: the number of whole requests sent.
    func floodUntilPaused(_ daemon: DaemonProcess) throws -> Int {
        var frame: [UInt8] = []
        let padding = [MetadataEntry(key: "x-padding", value: String(repeating: "p", count: 1024))]
        RequestFrame(callID: 1, method: MethodName.stats, metadata: padding, message: StatsRequestMessage().encoded())
            .appendFrame(to: &frame)
        var pending: [UInt8] = []
        var sentBytes = 0
        let paused = try daemon.repeatUntilLogged("reading paused", limit: 1_000) {
            if pending.count < 100 * frame.count { for _ in 0..<100 { pending += frame } }
            let sent = try sendSome(pending[...])
            pending.removeFirst(sent)
            sentBytes += sent
        }
        guard paused else { throw DaemonError("the daemon never paused reading a client that does not read") }
        return sentBytes / frame.count
    }
}

extension PoolStats {
    /// Every ad ever loaded is available, leased, or accounted for as expired, consumed or removed.
    var conservesAds: Bool {
        loaded == UInt64(available + leased) + expired + consumed + removed
    }
}
