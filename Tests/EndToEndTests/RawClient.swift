import AdLoaderCore
import AdLoaderWire
import Foundation

/// A blocking test client speaking the framed protocol with raw sockets; every read is
/// bounded by a deadline (poll(2)), so a test never hangs on a silent server.
final class RawClient {
    let fd: Int32
    private var decoder = FrameDecoder(maximumMessageSize: 64 << 20, expectingPreface: true)
    private var nextID: UInt64 = 1
    private(set) var isClosedByServer = false

    /// Connects to TCP `host:port`; sends the preface unless told not to.
    init(host: String = "127.0.0.1", port: Int, sendPreface: Bool = true, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DaemonError("socket failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw DaemonError("connect to \(host):\(port) failed: errno \(errno)")
        }
        if sendPreface { try send(ProtocolPreface.bytes) }
    }

    /// Connects to a Unix socket.
    init(unixPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in unixPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw DaemonError("connect to \(unixPath) failed: errno \(errno)")
        }
        try send(ProtocolPreface.bytes)
    }

    deinit { Glibc.close(fd) }

    /// Ends the connection from this side (the descriptor stays open until deinit).
    func disconnect() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Half-closes: no more requests, but answers can still be read.
    func halfClose() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    func makeCallID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Sends raw bytes; with a send timeout, returns false when the socket stayed full.
    @discardableResult
    func send(_ bytes: [UInt8], timeout: Duration = .seconds(10)) throws -> Bool {
        var offset = 0
        let deadline = ContinuousClock.now + timeout
        while offset < bytes.count {
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return false }
            let ready = poll(&pfd, 1, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready <= 0 { continue }
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw DaemonError("send failed: errno \(errno)")
            }
            offset += n
        }
        return true
    }

    /// Sends what the socket takes within `timeout` (0 bytes when it stays full).
    /// - Returns: the number of bytes sent.
    func sendSome(_ bytes: ArraySlice<UInt8>, timeout: Duration = .milliseconds(20)) throws -> Int {
        guard !bytes.isEmpty else { return 0 }
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&pfd, 1, Int32(timeout.components.attoseconds / 1_000_000_000_000_000 + timeout.components.seconds * 1000)) > 0
        else { return 0 }
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return 0 }
            throw DaemonError("send failed: errno \(errno)")
        }
        return n
    }

    func send(_ frame: RequestFrame) throws {
        var bytes: [UInt8] = []
        frame.appendFrame(to: &bytes)
        try send(bytes)
    }

    /// Starts a call and returns its id.
    @discardableResult
    func start(_ method: String, _ request: some WireMessage, callID: UInt64? = nil, timeoutMilliseconds: UInt32 = 0) throws -> UInt64 {
        let id = callID ?? makeCallID()
        try send(RequestFrame(callID: id, method: method, request: request, timeoutMilliseconds: timeoutMilliseconds))
        return id
    }

    /// The next frame, or nil when the server closed the connection; throws on timeout.
    func readFrame(timeout: Duration = .seconds(10)) throws -> ResponseFrame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let body = try decoder.next() {
                return try ResponseFrame(decoding: body)
            }
            if isClosedByServer { return nil }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw DaemonError("no frame within \(timeout)") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 || (n < 0 && errno == ECONNRESET) {
                isClosedByServer = true
                continue
            }
            if n < 0 { continue }
            chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }

    /// Reads until the server closes; returns the frames seen. Throws when it stays open.
    func readUntilClosed(timeout: Duration = .seconds(10)) throws -> [ResponseFrame] {
        var frames: [ResponseFrame] = []
        while let frame = try readFrame(timeout: timeout) { frames.append(frame) }
        return frames
    }

    /// Reads frames until the final one of `callID`; other calls' frames are returned too.
    func awaitEnd(of callID: UInt64, timeout: Duration = .seconds(10)) throws -> (end: ResponseFrame, others: [ResponseFrame]) {
        var others: [ResponseFrame] = []
        while true {
            guard let frame = try readFrame(timeout: timeout) else { throw DaemonError("closed before call \(callID) ended") }
            if frame.callID == callID && frame.end { return (frame, others) }
            others.append(frame)
        }
    }

    /// A unary call: sends it and waits for its answer (no other call may be open).
    func call<Response: WireMessage>(_ method: String, _ request: some WireMessage, as: Response.Type,
                                     timeoutMilliseconds: UInt32 = 0) throws -> Response {
        let id = try start(method, request, timeoutMilliseconds: timeoutMilliseconds)
        let (end, _) = try awaitEnd(of: id)
        guard end.status.code == .ok, let message = end.message else { throw DaemonError("call failed: \(end.status)") }
        return try Response(decoding: message)
    }

    /// A unary call expected to fail; returns its status.
    func failingCall(_ method: String, _ request: some WireMessage, timeoutMilliseconds: UInt32 = 0) throws -> Status {
        let id = try start(method, request, timeoutMilliseconds: timeoutMilliseconds)
        return try awaitEnd(of: id).end.status
    }

    func stats() throws -> [PoolStats] {
        try call(MethodName.stats, StatsRequestMessage(), as: StatsResponseMessage.self).pools
    }

    /// Borrows (wait 0) and returns one ad: the connection works.
    func borrowAndReturn(adUnit: String = "healthy") throws {
        let borrow = try call(
            MethodName.borrow, BorrowRequestMessage(adUnitID: adUnit, waitMilliseconds: 5_000), as: BorrowResponseMessage.self)
        guard let lease = borrow.lease else { throw DaemonError("no lease: \(borrow.outcome)") }
        _ = try call(MethodName.returnLease, ReturnRequestMessage(leaseID: lease.id, shown: false), as: ReturnResponseMessage.self)
    }
}

extension RawClient {
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
