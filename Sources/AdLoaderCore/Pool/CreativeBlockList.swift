/// The creatives one loader does not lend for now, each until an instant: bounded by a cap.
///
/// A block ends when its time passes (checked when asked, and pruned when one is added). At
/// the cap, adding one more lifts the block that would end soonest first, so memory stays at
/// `capacity` keys whatever clients invalidate; ``evicted`` counts those early lifts.
struct CreativeBlockList {
    /// Key -> Unix milliseconds the block ends at.
    private var blocks: [CreativeKey: Int64] = [:]
    /// Blocks lifted before their time to make room.
    private(set) var evicted: UInt64 = 0

    /// The number of blocks held (some may have ended since the last prune).
    var count: Int { blocks.count }

    var isEmpty: Bool { blocks.isEmpty }

    /// Whether `key` is blocked at `now`; forgets it when its block has ended.
    mutating func isBlocked(_ key: CreativeKey, at now: Int64) -> Bool {
        guard let until = blocks[key] else { return false }
        if until > now { return true }
        blocks[key] = nil
        return false
    }

    /// Blocks `key` until `until` (a later block of the same key extends it).
    /// - Parameter capacity: the most blocks to hold, >= 1.
    mutating func block(_ key: CreativeKey, until: Int64, now: Int64, capacity: Int) {
        if let current = blocks[key] {
            blocks[key] = max(current, until)
            return
        }
        prune(at: now)
        while blocks.count >= max(1, capacity), let soonest = blocks.min(by: { $0.value < $1.value }) {
            blocks[soonest.key] = nil
            evicted += 1
        }
        blocks[key] = until
    }

    /// Forgets blocks that have ended. O(count): called when a block is added (an operator
    /// action), never on the lending path.
    mutating func prune(at now: Int64) {
        blocks = blocks.filter { $0.value > now }
    }

    /// The blocks that have not ended at `now`, each with the instant it ends (Unix ms).
    func activeBlocks(at now: Int64) -> [CreativeKey: Int64] { blocks.filter { $0.value > now } }

    /// Keeps at most `capacity` blocks (after a reload lowered the cap), lifting the soonest.
    mutating func trim(to capacity: Int, now: Int64) {
        prune(at: now)
        while blocks.count > max(1, capacity), let soonest = blocks.min(by: { $0.value < $1.value }) {
            blocks[soonest.key] = nil
            evicted += 1
        }
    }
}
