/// Every open lease of a loader, by id, with a deadline heap of lease timeouts.
///
/// One heap for all pools lets the loader keep a single scheduled wakeup for reclaims
/// instead of one timer per lease.
struct LeaseTable {
    struct Record {
        var id: UInt64
        var pool: AdPool
        /// The ad's handle in `pool`.
        var adHandle: Int
        var slot: String?
        var expiresAt: AdInstant
    }

    private var records: [Record?] = []
    private var freeHandles: [Int] = []
    private var handlesByID: [UInt64: Int] = [:]
    private var timeouts = DeadlineHeap()

    init() {}

    var count: Int { handlesByID.count }

    /// The earliest lease timeout.
    var nextDeadline: AdInstant? { timeouts.first.map { AdInstant(unixMilliseconds: $0.deadline) } }

    subscript(handle: Int) -> Record {
        get { records[handle]! }
        set { records[handle] = newValue }
    }

    func handle(forID id: UInt64) -> Int? { handlesByID[id] }

    mutating func insert(_ record: Record) -> Int {
        let handle: Int
        if let reused = freeHandles.popLast() {
            handle = reused
            records[handle] = record
        } else {
            handle = records.count
            records.append(record)
        }
        handlesByID[record.id] = handle
        timeouts.insert(handle: handle, deadline: record.expiresAt.unixMilliseconds, sequence: record.id)
        return handle
    }

    @discardableResult
    mutating func remove(_ handle: Int) -> Record {
        let record = records[handle]!
        records[handle] = nil
        freeHandles.append(handle)
        handlesByID[record.id] = nil
        timeouts.remove(handle: handle)
        return record
    }

    /// A lease whose timeout is at or before `now`, if any.
    func firstDue(at now: AdInstant) -> Int? {
        guard let first = timeouts.first, first.deadline <= now.unixMilliseconds else { return nil }
        return first.handle
    }

    /// Every open lease handle (for shutdown), in a deterministic order.
    var allHandles: [Int] { timeouts.unorderedEntries.map(\.handle) }
}
