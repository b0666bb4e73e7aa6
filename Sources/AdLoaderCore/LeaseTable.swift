/// Every open lease of a loader, by id, with a deadline heap of lease timeouts.
///
/// One heap for all pools lets the loader keep a single scheduled wakeup for reclaims
/// instead of one timer per lease.
struct LeaseTable {
    struct Record {
        var id: UInt64
        var pool: AdPool
        /// The ad's handle in `pool`.
        var adHandle: AdHandle
        var slot: String?
        var expiresAt: AdInstant
    }

    private var records = Slab<LeaseHandle, Record>()
    private var handlesByID: [UInt64: LeaseHandle] = [:]
    private var timeouts = DeadlineHeap<LeaseHandle>()

    init() {}

    var count: Int { handlesByID.count }

    /// The earliest lease timeout.
    var nextDeadline: AdInstant? { timeouts.first.map { AdInstant(unixMilliseconds: $0.deadline) } }

    subscript(handle: LeaseHandle) -> Record {
        get { records[handle] }
        _modify { yield &records[handle] }
    }

    func handle(forID id: UInt64) -> LeaseHandle? { handlesByID[id] }

    mutating func insert(_ record: Record) -> LeaseHandle {
        let handle = records.insert(record)
        handlesByID[record.id] = handle
        timeouts.insert(handle: handle, deadline: record.expiresAt.unixMilliseconds, sequence: record.id)
        return handle
    }

    @discardableResult
    mutating func remove(_ handle: LeaseHandle) -> Record {
        let record = records.remove(handle)
        handlesByID[record.id] = nil
        timeouts.remove(handle: handle)
        return record
    }

    /// A lease whose timeout is at or before `now`, if any.
    func firstDue(at now: AdInstant) -> LeaseHandle? {
        guard let first = timeouts.first, first.deadline <= now.unixMilliseconds else { return nil }
        return first.handle
    }

    /// Every open lease handle (for shutdown), in a deterministic order.
    var allHandles: [LeaseHandle] { timeouts.unorderedEntries.map(\.handle) }
}
