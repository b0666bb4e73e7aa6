public import AdLoaderClient
import AdLoaderCore
import AdLoaderWire

/// What a Swift case gets: a connected client, a fresh id and `expect`.
///
/// This file and `Catalog.swift` are the only shared code of the Swift cases (the policy in
/// Examples/README.md): everything a case does is in its own file.
public struct ExampleRun: Sendable {
    /// Connected to the daemon under test (`--endpoint`, `$ADLOADER_ENDPOINT`).
    public let client: AdLoaderClient
    /// Unique per run: cases put it in their ad unit, device and session ids, so that a daemon
    /// that already served a case (its pools, its app-open counts) does not change the outcome.
    public let id: String
    let output: @Sendable (String) -> Void

    /// Prints one line of the case's narrative (indented under its title).
    public func log(_ line: String) { output("    " + line) }

    /// Asserts: throws ``ExampleFailure`` with `message` when `condition` is false.
    public func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, fileID: String = #fileID, line: Int = #line
    ) throws(ExampleFailure) {
        if !condition { throw ExampleFailure("\(fileID):\(line): \(message())") }
    }
}

/// A case's assertion failed.
public struct ExampleFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs Swift cases against a live daemon: one connection per case, a bound on each case,
/// `PASS`/`FAIL` lines.
public enum ExampleRunner {
    /// The longest a case may take before it counts as failed.
    public static let caseTimeout: Duration = .seconds(30)

    /// Runs `examples` in order against `endpoint`; returns the names of those that failed.
    public static func run(
        _ examples: [Example], endpoint: Endpoint, token: String? = nil, output: @escaping @Sendable (String) -> Void
    ) async -> [String] {
        var failed: [String] = []
        for example in examples {
            guard case .swift(let body) = example.code else { continue }
            output("\(example.title)  [\(example.name)]")
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let client = try AdLoaderClient.connect(to: endpoint, token: token)
                defer { client.close() }
                let run = ExampleRun(client: client, id: freshID(), output: output)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await body(run) }
                    group.addTask {
                        try await Task.sleep(for: caseTimeout)
                        throw ExampleFailure("did not finish within \(caseTimeout)")
                    }
                    try await group.next()
                    group.cancelAll()
                }
                output("PASS \(example.name) (\(milliseconds(clock.now - start)) ms)")
            } catch {
                output("FAIL \(example.name): \(error)")
                failed.append(example.name)
            }
        }
        return failed
    }

    private static func freshID() -> String {
        String(UInt64.random(in: 0..<(1 << 40)), radix: 36)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
