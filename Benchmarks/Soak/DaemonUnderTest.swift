import Foundation

/// The real adloaderd, started as a child process on port 0 with the soak's configuration,
/// and what `/proc` says about it.
final class DaemonUnderTest: @unchecked Sendable {
    // @unchecked: the Process is touched only by the soak's main task.
    let process = Process()
    let port: Int
    let pid: Int32
    let logURL: URL

    init(binary: String, configuration: String, directory: URL, label: String, compactionSize: String) throws {
        let configURL = directory.appendingPathComponent("soak-\(label)-config.json")
        try configuration.write(to: configURL, atomically: true, encoding: .utf8)
        logURL = directory.appendingPathComponent("soak-\(label)-daemon.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        // The pool store on, as in production (the default), write-through journal included,
        // in the soak's directory: its growth and its checkpoints are part of what is measured.
        // Compacted every `compactionSize` (SoakBench's default 8 MiB; the product's 64 MiB is
        // about a minute of this load): a long soak runs many compactions, the first within its
        // warm-up, so a cost that grows per compaction shows in the judged half. Each compaction
        // holds the pools' state twice for a moment (replay and checkpoint: a few MiB here), so
        // RSS saw-tooths by that much; the one-minute smoke, judged on 2 MiB, compacts never.
        let store = directory.appendingPathComponent("soak-\(label)-pools.sqlite").path
        process.arguments = [
            "--config", configURL.path, "--port", "0", "--shutdown-grace-period", "2s", "--pool-store", "sqlite",
            "--pool-store-path", store, "--pool-store-journal-compaction-size", compactionSize,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["ADLOADERD_LOG_LEVEL"] = "warning"
        process.environment = environment
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: logURL)
        try process.run()
        pid = process.processIdentifier
        // The banner "adloaderd listening on 127.0.0.1:PORT": read up to the first newline.
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "listening on "),
            let colon = text[range.upperBound...].firstIndex(of: ":"),
            let port = Int(text[text.index(after: colon)...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw SoakFailure("no banner from \(binary): \(text) (log: \(logURL.path))")
        }
        self.port = port
    }

    var isRunning: Bool { process.isRunning }

    /// Resident set size in KiB (VmRSS of /proc/PID/status).
    func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// Open file descriptors (entries of /proc/PID/fd).
    func openDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// SIGTERM, then waits (bounded) for the exit.
    /// - Returns: the exit status, or nil when it had to be killed.
    func stop() -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }
}
