#if canImport(Glibc)
    import Glibc
#endif

/// CPU time a process has used so far: `utime` and `stime` from `/proc/PID/stat`.
///
/// Read at the start and the end of the measured window, the difference divided by the calls
/// answered in it is the server's CPU per call. Unlike calls per second it does not depend on
/// how much CPU the load generator takes from the server on a small machine.
struct ProcessCPU {
    /// Seconds in user mode.
    var user: Double
    /// Seconds in the kernel on the process's behalf.
    var system: Double

    var total: Double { user + system }

    static func - (a: ProcessCPU, b: ProcessCPU) -> ProcessCPU {
        ProcessCPU(user: a.user - b.user, system: a.system - b.system)
    }

    /// Reads the CPU times of process `pid` (all its threads).
    /// - Throws: when the process does not exist or the file does not parse.
    static func read(pid: Int32) throws(BenchFailure) -> ProcessCPU {
        let path = "/proc/\(pid)/stat"
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchFailure(description: "cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw BenchFailure(description: "cannot read \(path): errno \(errno)") }
        guard let ticks = parseTicks(bytes[0..<n]) else { throw BenchFailure(description: "\(path) does not parse") }
        let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessCPU(user: Double(ticks.user) / perSecond, system: Double(ticks.system) / perSecond)
    }

    /// `utime` and `stime` (fields 14 and 15, clock ticks) of a `/proc/PID/stat` line. The
    /// command name (field 2) is in parentheses and may hold spaces and parentheses, so the
    /// fields are counted from the last `)`.
    static func parseTicks(_ line: ArraySlice<UInt8>) -> (user: UInt64, system: UInt64)? {
        guard let close = line.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state): utime is field 14, stime field 15.
        guard fields.count > 12, let user = UInt64(text(fields[11])), let system = UInt64(text(fields[12])) else {
            return nil
        }
        return (user, system)
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}
