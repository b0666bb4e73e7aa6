#if canImport(Glibc)
    import Glibc
#endif

/// What `/proc/self` says about this process: resident memory, open and maximum file
/// descriptors, CPU time. Read at scrape time (a few small reads; Linux only, zeros elsewhere).
package struct ProcessStats {
    package var residentBytes = 0.0
    package var openDescriptors = 0.0
    package var maxDescriptors = 0.0
    package var cpuSeconds = 0.0

    package static func read() -> ProcessStats {
        var stats = ProcessStats()
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        // statm: size resident shared text lib data dt (pages).
        if let statm = readFile("/proc/self/statm") {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let pages = Double(fields[1]) { stats.residentBytes = pages * pageSize }
        }
        // stat: utime and stime are fields 14 and 15, counted after the ")" ending the name.
        if let stat = readFile("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]), ticks > 0 {
                stats.cpuSeconds = (user + system) / ticks
            }
        }
        if let directory = opendir("/proc/self/fd") {
            var count = 0
            while let entry = readdir(directory) {
                let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] == UInt8(ascii: ".") }
                if !isDot { count += 1 }
            }
            closedir(directory)
            stats.openDescriptors = Double(max(0, count - 1))  // minus the descriptor reading it
        }
        var limit = rlimit()
        if getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 { stats.maxDescriptors = Double(limit.rlim_cur) }
        return stats
    }

    private static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// RLIMIT_NOFILE imports as an enum case on glibc (`__rlimit_resource`); `getrlimit` takes it.
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
