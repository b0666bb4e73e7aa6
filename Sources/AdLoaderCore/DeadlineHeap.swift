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
        entries.append(Entry(deadline: deadline, sequence: sequence, handle: handle))
        positions[handle.index] = entries.count - 1
        siftUp(entries.count - 1)
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
        entries[index] = last
        positions[last.handle.index] = index
        if index > 0 && Self.less(entries[index], entries[(index - 1) / 2]) {
            siftUp(index)
        } else {
            siftDown(index)
        }
    }

    private static func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        let entry = entries[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(entry, entries[parent]) else { break }
            entries[child] = entries[parent]
            positions[entries[child].handle.index] = child
            child = parent
        }
        entries[child] = entry
        positions[entry.handle.index] = child
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let entry = entries[parent]
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            let right = left + 1
            let smaller = right < count && Self.less(entries[right], entries[left]) ? right : left
            guard Self.less(entries[smaller], entry) else { break }
            entries[parent] = entries[smaller]
            positions[entries[parent].handle.index] = parent
            parent = smaller
        }
        entries[parent] = entry
        positions[entry.handle.index] = parent
    }
}
