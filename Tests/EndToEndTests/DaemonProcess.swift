import Foundation
import Testing

/// The real `adloaderd` binary started as a child process on port 0.
///
/// The binary sits beside the test bundle (SwiftPM builds it because the test target
/// depends on the executable target). The constructor waits, with a bound, for the line
/// `adloaderd listening on HOST:PORT` on stdout.
final class DaemonProcess: @unchecked Sendable {
    // @unchecked: the Process and pipes are touched only by the test that owns the daemon;
    // the termination handler only signals the semaphore.
    let process = Process()
    let port: Int
    let host: String
    /// The daemon's stdout lines after the banner is parsed, stderr as a whole at exit.
    private let stdout = Pipe()
    private let stderrFile: URL
    /// The daemon's working directory, its own: files it creates at relative default paths
    /// (the SQLite cap store) stay out of the checkout and out of other tests' way.
    private let directory: URL
    private let exited = DispatchSemaphore(value: 0)
    let bannerLines: [String]

    static var binaryURL: URL { executableURL(named: "adloaderd") }

    /// A binary of this package, found beside the test bundle.
    static func executableURL(named name: String) -> URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // swift-testing runs the .xctest binary directly; on some layouts it is a bundle dir.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path),
            directory.path != "/"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// Starts the daemon and waits for its banner.
    /// - Parameters:
    ///   - arguments: extra flags; `--port 0` is added unless a port is given.
    ///   - config: a JSON configuration written to a temporary file and passed with --config.
    init(_ arguments: [String] = [], config: String? = nil, environment: [String: String] = [:]) throws {
        var arguments = arguments
        if !arguments.contains("--port") { arguments += ["--port", "0"] }
        // A draining daemon waits for its clients to close (PROTOCOL.md 9); tests leave theirs
        // open, so keep the wait short unless the test is about it.
        if !arguments.contains("--shutdown-grace-period") { arguments += ["--shutdown-grace-period", "1s"] }
        if let config {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "adloaderd-\(UUID().uuidString).json")
            try config.write(to: url, atomically: true, encoding: .utf8)
            arguments += ["--config", url.path]
        }
        stderrFile = FileManager.default.temporaryDirectory.appendingPathComponent("adloaderd-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("adloaderd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process.currentDirectoryURL = directory
        process.executableURL = Self.binaryURL
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["ADLOADERD_LOG_LEVEL"] = env["ADLOADERD_LOG_LEVEL"] ?? "debug"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let lines = try Self.readLines(from: stdout.fileHandleForReading, count: 2, timeout: .seconds(20))
        bannerLines = lines
        guard let first = lines.first, first.hasPrefix("adloaderd listening on "),
            let address = first.dropFirst("adloaderd listening on ".count).split(separator: " ").first,
            let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...])
        else {
            process.terminate()
            let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            throw DaemonError("no banner; stdout: \(lines), stderr: \(log)")
        }
        self.host = String(address[..<colon])
        self.port = port
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + 5)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var stderrText: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Calls `step` until the daemon has logged `text`, at most `limit` times.
    /// - Returns: whether the line appeared.
    func repeatUntilLogged(_ text: String, limit: Int = 2_000, _ step: () throws -> Void) rethrows -> Bool {
        for _ in 0..<limit {
            if stderrText.contains(text) { return true }
            try step()
        }
        return stderrText.contains(text)
    }

    /// Sends a signal while the daemon runs (after it exited its pid may already be another
    /// process's: pid_max is 32,768 here and a test run starts thousands of processes).
    func signal(_ number: Int32) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit, with a bound.
    /// - Returns: the exit status, or nil when it did not exit in time.
    func waitForExit(timeout: Duration = .seconds(15)) -> Int32? {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard exited.wait(timeout: .now() + seconds) == .success else { return nil }
        exited.signal()  // later waits succeed too
        return process.terminationStatus
    }

    /// Reads `count` lines (or fewer at EOF) with a deadline, without sleeping: poll(2) on the pipe.
    static func readLines(from handle: FileHandle, count: Int, timeout: Duration) throws -> [String] {
        var buffer: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        let fd = handle.fileDescriptor
        while buffer.filter({ $0 == 0x0A }).count < count {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { break }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(remaining.components.seconds * 1000 + 1))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            buffer += chunk[0..<n]
        }
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Runs the binary to completion (for configurations that must fail).
    static func runToExit(
        _ arguments: [String], config: String? = nil, environment: [String: String] = [:],
        binary: URL = binaryURL,
        timeout: Duration = .seconds(20)
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        var arguments = arguments
        if let config {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "adloaderd-\(UUID().uuidString).json")
            try config.write(to: url, atomically: true, encoding: .utf8)
            arguments += ["--config", url.path]
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        let seconds = Double(timeout.components.seconds)
        guard exited.wait(timeout: .now() + seconds) == .success else {
            process.terminate()
            throw DaemonError("\(binary.lastPathComponent) \(arguments) did not exit")
        }
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }
}

struct DaemonError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
