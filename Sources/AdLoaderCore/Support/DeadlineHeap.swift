/// A binary min-heap of slab handles ordered by (deadline, sequence).
///
/// Peeking is O(1); insert, pop and removal of any handle are O(log n). Each handle's
/// position is tracked so that an entry can be removed without a search, which keeps the
/// heap free of stale entries (its size is always the number of live handles).
///
/// Handles are dense (a ``Slab``'s), so their positions live in an array by handle index.
struct DeadlineHeap<Handle: SlabHandle> {
    struct Entry: Equatable {
        /// Milliseconds since the epoch.
        var deadline: Int64
        /// Breaks deadline ties: the lower sequence comes first.
        var sequence: UInt64
        var handle: Handle
    }

    private var entries: [Entry] = []
    /// handle index -> index in `entries`, or -1 when the handle is not in the heap.
    private var positions: [Int] = []

    init() {}

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// The entry with the earliest deadline.
    var first: Entry? { entries.first }

    /// Every entry, in no particular (but deterministic) order.
    var unorderedEntries: [Entry] { entries }

    func contains(_ handle: Handle) -> Bool {
        handle.index < positions.count && positions[handle.index] >= 0
    }

    mutating func insert(handle: Handle, deadline: Int64, sequence: UInt64) {
        precondition(handle.index >= 0 && !contains(handle), "handle already in the heap")
        if handle.index >= positions.count {
            positions.append(contentsOf: repeatElement(-1, count: handle.index - positions.count + 1))
        }
        let entry = Entry(deadline: deadline, sequence: sequence, handle: handle)
        entries.append(entry)
        siftUp(entry, from: entries.count - 1)
    }

    @discardableResult
    mutating func popFirst() -> Entry? {
        guard let first = entries.first else { return nil }
        remove(at: 0)
        return first
    }

    @discardableResult
    mutating func remove(handle: Handle) -> Entry? {
        guard contains(handle) else { return nil }
        let index = positions[handle.index]
        let entry = entries[index]
        remove(at: index)
        return entry
    }

    mutating func removeAll() {
        for entry in entries { positions[entry.handle.index] = -1 }
        entries.removeAll()
    }

    private mutating func remove(at index: Int) {
        positions[entries[index].handle.index] = -1
        let last = entries.removeLast()
        guard index < entries.count else { return }
        if index > 0 && Self.less(last, entries[(index - 1) / 2]) {
            siftUp(last, from: index)
        } else {
            siftDown(last, from: index)
        }
    }

    @inline(__always)
    private static func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    // The sifts run on the arrays' buffers: one uniqueness check per call instead of one per
    // element written, and no bounds checks (every index is below `entries.count`, and every
    // handle index in the heap below `positions.count`). Lending an ad takes it off the top of
    // a heap of thousands; this was ~870 instructions per Borrow with checked subscripts
    // (callgrind).

    /// Puts `entry` at the hole `start`, moving it up past larger parents.
    private mutating func siftUp(_ entry: Entry, from start: Int) {
        positions.withUnsafeMutableBufferPointer { positions in
            entries.withUnsafeMutableBufferPointer { entries in
                let e = entries.baseAddress!
                let p = positions.baseAddress!
                var child = start
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard Self.less(entry, e[parent]) else { break }
                    e[child] = e[parent]
                    p[e[child].handle.index] = child
                    child = parent
                }
                e[child] = entry
                p[entry.handle.index] = child
            }
        }
    }

    /// Puts `entry` at the hole `start`, moving it down past smaller children.
    ///
    /// Bottom-up (Floyd): the hole goes down the path of smaller children to a leaf with one
    /// comparison per level, then `entry` moves up from there. With a strict order (sequences
    /// are unique) this ends with the same layout as the textbook sift, in fewer comparisons
    /// when `entry` belongs near the bottom, as the last entry moved into a removed one's
    /// place usually does.
    private mutating func siftDown(_ entry: Entry, from start: Int) {
        positions.withUnsafeMutableBufferPointer { positions in
            entries.withUnsafeMutableBufferPointer { entries in
                let e = entries.baseAddress!
                let p = positions.baseAddress!
                let count = entries.count
                var hole = start
                while true {
                    let left = 2 * hole + 1
                    guard left < count else { break }
                    let right = left + 1
                    let smaller = right < count && Self.less(e[right], e[left]) ? right : left
                    e[hole] = e[smaller]
                    p[e[hole].handle.index] = hole
                    hole = smaller
                }
                while hole > start {
                    let parent = (hole - 1) / 2
                    guard Self.less(entry, e[parent]) else { break }
                    e[hole] = e[parent]
                    p[e[hole].handle.index] = hole
                    hole = parent
                }
                e[hole] = entry
                p[entry.handle.index] = hole
            }
        }
    }
}
