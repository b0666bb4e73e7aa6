import Foundation

/// Counts of what the workers did and saw, by name ("borrow.leased", "status.NOT_FOUND", ...).
final class Tally: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var unexpected: [String] = []

    func add(_ name: String, _ count: Int = 1) {
        lock.lock()
        counts[name, default: 0] += count
        lock.unlock()
    }

    /// Something no correct daemon does; kept (the first 20) for the report.
    func unexpected(_ what: String) {
        lock.lock()
        counts["unexpected", default: 0] += 1
        if unexpected.count < 20 { unexpected.append(what) }
        lock.unlock()
    }

    var snapshot: (counts: [String: Int], unexpected: [String]) {
        lock.lock()
        defer { lock.unlock() }
        return (counts, unexpected)
    }

    var calls: Int {
        lock.lock()
        defer { lock.unlock() }
        return counts.filter { $0.key.hasPrefix("call.") }.values.reduce(0, +)
    }
}
