#if canImport(Glibc)
    import Glibc
#endif

/// Read and write system calls a process has made so far: `syscr` and `syscw` from
/// `/proc/PID/io`.
///
/// Per call, they show how many answers the server reads and writes per system call, which
/// is most of its kernel time under pipelining (`epoll_wait` is not counted).
struct ProcessIO {
    var reads: UInt64
    var writes: UInt64

    static func - (a: ProcessIO, b: ProcessIO) -> ProcessIO {
        ProcessIO(reads: a.reads &- b.reads, writes: a.writes &- b.writes)
    }

    /// Reads the counters of process `pid`; nil when `/proc/PID/io` cannot be read (it needs
    /// the same rights as ptrace).
    static func read(pid: Int32) -> ProcessIO? {
        let fd = open("/proc/\(pid)/io", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        var reads: UInt64?
        var writes: UInt64?
        for line in bytes[0..<n].split(separator: UInt8(ascii: "\n")) {
            let parts = line.split(separator: UInt8(ascii: ":"), maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = String(decoding: parts[0], as: UTF8.self)
            let value = UInt64(String(decoding: parts[1], as: UTF8.self).trimmingSpaces)
            if name == "syscr" { reads = value }
            if name == "syscw" { writes = value }
        }
        guard let reads, let writes else { return nil }
        return ProcessIO(reads: reads, writes: writes)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(decoding: utf8.drop { $0 == 0x20 }.reversed().drop { $0 == 0x20 }.reversed(), as: UTF8.self)
    }
}
