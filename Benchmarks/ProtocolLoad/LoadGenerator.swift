import AdLoaderWire

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// `ppoll(2)`: poll with a nanosecond timeout, which the open loop needs to send on time.
/// Glibc's Swift module does not import it (it is behind `_GNU_SOURCE`), so it is looked up
/// in libc once.
typealias PPollFunction =
    @convention(c) (
        UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?
    ) -> Int32

func lookUpPPoll() throws(BenchFailure) -> PPollFunction {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "ppoll") else {
        throw BenchFailure(description: "ppoll not found in libc")
    }
    return unsafeBitCast(symbol, to: PPollFunction.self)
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// One in-flight position of a connection. Each slot chains Borrow -> Return -> Borrow...:
/// every ad borrowed is returned unshown, so the pool never drains.
struct Slot {
    var busy = false
    var isBorrow = false
    /// The lease this slot holds (borrowed, not yet returned); 0 = none.
    var lease: UInt64 = 0
    /// When the call was sent (closed loop) or meant to be sent (open loop), ns.
    var sentAt: UInt64 = 0
}

/// One client connection: a non-blocking socket, its output buffer and its slots.
final class LoadConnection {
    let fd: Int32
    var decoder: FrameDecoder
    var out = ByteBuffer(capacity: 64 * 1024)
    var slots: [Slot]
    var freeSlots: [Int]
    var busyCount = 0
    var leaseCount = 0
    private var counter: UInt64 = 0
    /// Open loop: intended send times not yet sent because every slot was busy.
    var backlog: [UInt64] = []
    var backlogHead = 0
    /// Answers still to cross-check with AdLoaderWire's full decoders.
    var verifyBorrows = 4
    var verifyReturns = 4

    init(port: UInt16, depth: Int, maximumMessageSize: Int) throws(BenchFailure) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let e = errno
            close(fd)
            throw BenchFailure(description: "cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(e)))")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
        decoder = FrameDecoder(maximumMessageSize: maximumMessageSize, expectingPreface: true)
        slots = Array(repeating: Slot(), count: depth)
        freeSlots = Array((0..<depth).reversed())
        out.append(ProtocolPreface.bytes)
    }

    deinit {
        close(fd)
        out.deallocate()
    }

    /// A fresh call id whose remainder modulo the depth names the slot.
    @inline(__always)
    func nextCallID(slot: Int) -> UInt64 {
        counter &+= 1
        return counter * UInt64(slots.count) + UInt64(slot) + 1
    }

    @inline(__always)
    func slot(ofCallID callID: UInt64) -> Int? {
        guard callID > 0 else { return nil }
        let s = Int((callID - 1) % UInt64(slots.count))
        return slots[s].busy ? s : nil
    }

    /// Writes what the socket takes. - Returns: false on a broken connection.
    func flush() -> Bool {
        while !out.isEmpty {
            let n = write(fd, out.readable.baseAddress, out.count)
            if n > 0 {
                out.consume(n)
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
        return true
    }
}

/// Drives N connections x D in flight from one thread with poll(2): closed loop (every
/// answer sends the slot's next call at once) or open loop at a fixed rate (latency counted
/// from the intended send time, so a slow server cannot hide queueing delay).
final class LoadGenerator {
    struct Counters {
        var calls: UInt64 = 0
        var borrows: UInt64 = 0
        var returns: UInt64 = 0
        var noAdYet: UInt64 = 0
        var errors: UInt64 = 0
        var responseBytes: UInt64 = 0
        var histogram = LatencyHistogram()
    }

    struct Outcome {
        var counters: Counters
        var measuredSeconds: Double
        var leasesLeft: Int
        var firstError: String?
        /// The daemon's CPU time over the measured window (with `--server-pid`).
        var serverCPU: ProcessCPU?
        /// The daemon's read and write system calls over the measured window (with `--server-pid`).
        var serverIO: ProcessIO?
    }

    let options: Options
    let templates: RequestTemplates
    private var connections: [LoadConnection] = []
    private var counters = Counters()
    private var measuring = false
    private var draining = false
    private var firstError: String?
    private let readBuffer: UnsafeMutableRawBufferPointer

    init(options: Options) {
        self.options = options
        templates = RequestTemplates(adUnitID: options.adUnitID, shown: options.shown)
        readBuffer = .allocate(byteCount: 256 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    func run() throws(BenchFailure) -> Outcome {
        if let problem = templates.selfCheck() {
            throw BenchFailure(description: "stamped frames differ from AdLoaderWire's encoding: \(problem)")
        }
        for _ in 0..<options.connections {
            connections.append(
                try LoadConnection(port: options.port, depth: options.depth, maximumMessageSize: 4 << 20))
        }
        let start = monotonicNanoseconds()
        let warmupEnd = start + UInt64(options.warmupSeconds * 1e9)
        let measureEnd = warmupEnd + UInt64(options.durationSeconds * 1e9)
        var measureStart = warmupEnd
        var measuredNanoseconds: UInt64 = 0
        var drainDeadline = UInt64.max
        let openLoop = options.rate > 0
        let interval = openLoop ? 1e9 / options.rate : 0
        var arrivals: UInt64 = 0
        var nextConnection = 0
        var lastProgress = start
        let serverPID = options.serverPID
        var serverCPUAtStart: ProcessCPU? = nil
        var serverCPU: ProcessCPU? = nil
        var serverIOAtStart: ProcessIO? = nil
        var serverIO: ProcessIO? = nil

        if !openLoop {
            for c in connections {
                for _ in 0..<options.depth { startCall(on: c, at: start) }
            }
        }
        let ppoll = try lookUpPPoll()
        var fds = connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }

        while true {
            var now = monotonicNanoseconds()
            if !measuring && !draining && now >= warmupEnd {
                measuring = true
                measureStart = now
                counters = Counters()
                if serverPID > 0 {
                    serverCPUAtStart = try ProcessCPU.read(pid: serverPID)
                    serverIOAtStart = ProcessIO.read(pid: serverPID)
                }
            }
            if !draining && (now >= measureEnd || (options.maxCalls > 0 && counters.calls >= options.maxCalls)) {
                if measuring {
                    measuredNanoseconds = now - measureStart
                    if let serverCPUAtStart { serverCPU = try ProcessCPU.read(pid: serverPID) - serverCPUAtStart }
                    if let serverIOAtStart, let io = ProcessIO.read(pid: serverPID) { serverIO = io - serverIOAtStart }
                }
                measuring = false
                draining = true
                drainDeadline = now + 3_000_000_000
                for c in connections { drain(c, at: now) }
            }
            if draining {
                if connections.allSatisfy({ $0.busyCount == 0 && $0.leaseCount == 0 && $0.out.isEmpty }) { break }
                if now >= drainDeadline { break }
            }
            if firstError != nil { break }
            if now - lastProgress > 5_000_000_000 {
                throw BenchFailure(description: "no answer for 5 s with calls in flight: the daemon stopped serving")
            }

            // Open loop: the arrivals due by now go to the connections in turn.
            var timeout = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            if openLoop && !draining {
                while true {
                    let due = start + UInt64(Double(arrivals) * interval)
                    if due > now {
                        let wait = due - now
                        timeout = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                        break
                    }
                    arrivals += 1
                    let c = connections[nextConnection]
                    nextConnection = (nextConnection + 1) % connections.count
                    c.backlog.append(due)
                }
                for c in connections { sendBacklog(c) }
            }

            for (i, c) in connections.enumerated() {
                guard c.flush() else {
                    throw BenchFailure(description: "write failed: the daemon closed the connection")
                }
                fds[i].events = Int16(POLLIN) | (c.out.isEmpty ? 0 : Int16(POLLOUT))
                fds[i].revents = 0
            }
            let ready = ppoll(&fds, nfds_t(fds.count), &timeout, nil)
            if ready < 0 {
                if errno == EINTR { continue }
                throw BenchFailure(description: "ppoll: errno \(errno)")
            }
            guard ready > 0 else { continue }
            now = monotonicNanoseconds()
            for (i, c) in connections.enumerated() where fds[i].revents != 0 {
                let events = fds[i].revents
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    if try readAnswers(c, at: now) { lastProgress = now }
                }
            }
        }
        if measuredNanoseconds == 0 { measuredNanoseconds = max(monotonicNanoseconds() - measureStart, 1) }
        let leasesLeft = connections.reduce(0) { $0 + $1.leaseCount }
        connections.removeAll()
        return Outcome(
            counters: counters, measuredSeconds: Double(measuredNanoseconds) / 1e9, leasesLeft: leasesLeft,
            firstError: firstError, serverCPU: serverCPU, serverIO: serverIO)
    }

    /// Sends the next call of a free slot: a Return when it holds a lease, else a Borrow.
    @inline(__always)
    private func startCall(on c: LoadConnection, at sentAt: UInt64) {
        guard let s = c.freeSlots.popLast() else { return }
        let callID = c.nextCallID(slot: s)
        c.slots[s].busy = true
        c.slots[s].sentAt = sentAt
        c.busyCount += 1
        if c.slots[s].lease != 0 {
            c.slots[s].isBorrow = false
            templates.appendReturn(callID: callID, leaseID: c.slots[s].lease, to: &c.out)
        } else {
            c.slots[s].isBorrow = true
            templates.appendBorrow(callID: callID, to: &c.out)
        }
    }

    private func sendBacklog(_ c: LoadConnection) {
        while c.backlogHead < c.backlog.count, !c.freeSlots.isEmpty {
            startCall(on: c, at: c.backlog[c.backlogHead])
            c.backlogHead += 1
        }
        if c.backlogHead == c.backlog.count {
            c.backlog.removeAll(keepingCapacity: true)
            c.backlogHead = 0
        }
    }

    /// End of the run: free slots holding a lease give it back; nothing new is borrowed.
    private func drain(_ c: LoadConnection, at now: UInt64) {
        c.backlog.removeAll()
        c.backlogHead = 0
        for s in c.slots.indices where !c.slots[s].busy && c.slots[s].lease != 0 {
            c.freeSlots.removeAll { $0 == s }
            c.freeSlots.append(s)
            startCall(on: c, at: now)
        }
    }

    /// Reads and handles every answer available. - Returns: true when an answer arrived.
    private func readAnswers(_ c: LoadConnection, at now: UInt64) throws(BenchFailure) -> Bool {
        var progressed = false
        while true {
            let n = read(c.fd, readBuffer.baseAddress, readBuffer.count)
            if n == 0 { throw BenchFailure(description: "the daemon closed a connection") }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return progressed }
                if errno == EINTR { continue }
                throw BenchFailure(description: "read failed: errno \(errno)")
            }
            c.decoder.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
            while true {
                let handled: Result<Bool, BenchFailure>?
                do {
                    handled = try c.decoder.withNextMessage { body in self.handle(body, on: c, at: now) }
                } catch {
                    throw BenchFailure(description: "bad frame from the daemon: \(error)")
                }
                guard let handled else { break }
                switch handled {
                case .success: progressed = true
                case .failure(let failure): throw failure
                }
            }
            if n < readBuffer.count { return progressed }
        }
    }

    private func handle(_ body: UnsafeRawBufferPointer, on c: LoadConnection, at now: UInt64) -> Result<
        Bool, BenchFailure
    > {
        // The slot is known from the call id; scan as a Borrow answer only when it is one.
        guard let first = ResponseScanner.scan(body, isBorrow: false) else {
            return .failure(BenchFailure(description: "undecodable ResponseFrame of \(body.count) bytes"))
        }
        guard let s = c.slot(ofCallID: first.callID), first.end else {
            return .failure(
                BenchFailure(
                    description: "answer for unknown call \(first.callID) (end \(first.end), status \(first.status))"))
        }
        let isBorrow = c.slots[s].isBorrow
        let r = isBorrow ? (ResponseScanner.scan(body, isBorrow: true) ?? first) : first
        if let problem = verify(body, r, on: c, isBorrow: isBorrow) {
            return .failure(BenchFailure(description: problem))
        }

        c.slots[s].busy = false
        c.busyCount -= 1
        if r.status != 0 {
            if firstError == nil { firstError = "call \(r.callID) ended with status \(r.status)" }
            if measuring { counters.errors += 1 }
        } else if isBorrow {
            if r.leaseID != 0 {
                c.slots[s].lease = r.leaseID
                c.leaseCount += 1
            } else if measuring {
                counters.noAdYet += 1
            }
        } else {
            c.slots[s].lease = 0
            c.leaseCount -= 1
        }
        if measuring {
            counters.calls += 1
            if isBorrow { counters.borrows += 1 } else { counters.returns += 1 }
            counters.responseBytes += UInt64(body.count + 5)
            counters.histogram.record(now >= c.slots[s].sentAt ? now - c.slots[s].sentAt : 0)
        }
        c.freeSlots.append(s)
        if draining {
            if c.slots[s].lease != 0 { startCall(on: c, at: now) }
        } else if options.rate <= 0 {
            if !options.batch {
                startCall(on: c, at: now)
            } else if c.busyCount == 0 {
                for _ in 0..<c.slots.count { startCall(on: c, at: now) }
            }
        }
        return .success(true)
    }

    /// Cross-checks the first answers of a connection with AdLoaderWire's full decoders.
    private func verify(_ body: UnsafeRawBufferPointer, _ r: ScannedResponse, on c: LoadConnection, isBorrow: Bool)
        -> String?
    {
        if isBorrow {
            guard c.verifyBorrows > 0 else { return nil }
            c.verifyBorrows -= 1
        } else {
            guard c.verifyReturns > 0 else { return nil }
            c.verifyReturns -= 1
        }
        do throws(FrameError) {
            let frame = try ResponseFrame(decoding: body)
            guard frame.callID == r.callID, frame.end == r.end, UInt64(frame.status.code.rawValue) == r.status else {
                return "scanner disagrees with ResponseFrame: \(frame) vs \(r)"
            }
            if isBorrow, r.status == 0 {
                let borrow = try BorrowResponseMessage(decoding: frame.message ?? [])
                guard (borrow.lease?.id ?? 0) == r.leaseID else {
                    return
                        "scanner lease \(r.leaseID) != BorrowResponseMessage lease \(String(describing: borrow.lease?.id))"
                }
            } else if !isBorrow, r.status == 0 {
                let answer = try ReturnResponseMessage(decoding: frame.message ?? [])
                guard answer.outcome == .backInPool || (templates.shown && answer.outcome == .consumed) else {
                    return "Return answered \(String(describing: answer.outcome)), expected backInPool"
                }
            }
        } catch {
            return "answer does not decode with AdLoaderWire: \(error)"
        }
        return nil
    }
}
