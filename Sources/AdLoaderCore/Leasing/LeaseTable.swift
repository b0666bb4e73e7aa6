/// Every open lease of a loader, by id, with a deadline heap of lease timeouts.
///
/// One heap for all pools lets the loader keep a single scheduled wakeup for reclaims
/// instead of one timer per lease.
///
/// A lease id encodes the lease's slot in the table and the slot's generation
/// (``IdentifierGenerator/leaseID(slot:generation:)``), so finding a lease by id is a decode
/// and one comparison, not a dictionary (insert, find and remove were ~700 instructions per
/// Borrow and Return, callgrind). A slot's generation grows with every lease it holds; a slot
/// whose generation would wrap is retired, so no id is ever handed out twice, and an id that
/// ended (or was never handed out) finds no lease.
struct LeaseTable {
    struct Record {
        var id: UInt64
        /// Retained: a lease keeps its pool alive, so no rule elsewhere has to (a pool a
        /// reload retired lives exactly as long as its last lease; a removed pool holds none).
        var pool: AdPool
        /// The ad's handle in `pool`.
        var adHandle: AdHandle
        var slot: String?
        var expiresAt: AdInstant
        /// Set on a lease lent by an AppOpen decision to SHOW (``AppOpenCoordinator``): whose
        /// counts its shown Return moves, and the reservation it holds; nil for every other lease.
        var appOpen: AppOpenLeaseTag? = nil
    }

    private var records = Slab<LeaseHandle, Record>()
    /// By slot index: the generation of the slot's next lease.
    private var generations: [UInt32] = []
    private var timeouts = DeadlineHeap<LeaseHandle>()
    /// How the most recently ended leases ended, for a clear NOT_FOUND: a ring of the last
    /// ``endedMemory`` ids, so it never grows beyond that.
    private var ended: [(id: UInt64, cause: EndCause)] = []
    private var endedNext = 0
    /// Leases reopened from a snapshot (``restore(_:ids:)``) whose id does not name their slot
    /// here, by id. Empty unless a restore happened: a lookup that misses checks it only then.
    private var restored: [UInt64: LeaseHandle] = [:]
    static let endedMemory = 4_096

    /// Why a lease id finds no open lease.
    enum EndCause: Equatable {
        /// The client returned it.
        case returned
        /// The lease timeout (or its ad's expiry) ended it.
        case reclaimed
        /// The loader ended it: its ad was dropped (slot borrowed again after expiry,
        /// disabled loader, shutdown, invalidated).
        case dropped
        /// It ended, too long ago to say how (beyond the last ``endedMemory`` leases).
        case endedLongAgo
        /// No lease with this id was ever lent by this loader.
        case neverLent
        /// The id names another replica as its lender (its top bits, ``IdentifierGenerator``).
        case lentByReplica(Int)
    }

    init() {}

    var count: Int { records.count }

    /// The earliest lease timeout.
    var nextDeadline: AdInstant? { timeouts.first.map { AdInstant(unixMilliseconds: $0.deadline) } }

    subscript(handle: LeaseHandle) -> Record {
        get { records[handle] }
        _modify { yield &records[handle] }
    }

    /// The open lease `id` names, if any.
    func handle(forID id: UInt64, ids: IdentifierGenerator) -> LeaseHandle? {
        if IdentifierGenerator.replica(of: id) == ids.replica {
            let handle = LeaseHandle(index: ids.leaseSlot(of: id).slot)
            if records.isLive(handle), records[handle].id == id { return handle }
        }
        return restored.isEmpty ? nil : restored[id]
    }

    /// Reopens a lease from a snapshot under its own id (`record.id`, not 0), which the
    /// caller checked names no open lease. The lease takes a free slot; when the id is one
    /// this table could make itself (same seed and replica, a slot within reach), that slot's
    /// generation moves past it, so no later lease gets the same id.
    mutating func restore(_ record: consuming Record, ids: IdentifierGenerator) -> LeaseHandle {
        let id = record.id
        precondition(id != 0, "a restored lease without its id")
        if IdentifierGenerator.replica(of: id) == ids.replica {
            let (slot, generation) = ids.leaseSlot(of: id)
            // A slot beyond 2^20 is another seed's id (or made up) far more often than ours:
            // it collides with ours only by chance, and growing the generations to it would not pay.
            if slot < 1 << 20, generation < IdentifierGenerator.generationLimit {
                while generations.count <= slot { generations.append(0) }
                generations[slot] = max(generations[slot], generation &+ 1)
            }
        }
        let index = records.nextHandle.index
        if index == generations.count { generations.append(0) }
        let deadline = record.expiresAt.unixMilliseconds
        let handle = records.insert(record)
        timeouts.insert(handle: handle, deadline: deadline, sequence: id)
        restored[id] = handle
        return handle
    }

    /// Opens a lease; its id (`record.id` is ignored) is made from its slot by `ids`.
    mutating func insert(_ record: consuming Record, ids: IdentifierGenerator) -> LeaseHandle {
        // The id is made before the record is stored, so the record is written once.
        let index = records.nextHandle.index
        precondition(index <= Int(UInt32.max), "lease table slots exhausted")
        if index == generations.count { generations.append(0) }
        var generation = generations[index]
        var id = ids.leaseID(slot: index, generation: generation)
        if id == 0 {
            // The one (slot, generation) of this seed that scrambles to 0: skip it. A slot
            // retires before its generation wraps, so this is never the last one.
            generation += 1
            id = ids.leaseID(slot: index, generation: generation)
        }
        generations[index] = generation &+ 1
        record.id = id
        let deadline = record.expiresAt.unixMilliseconds
        // Moved into the slab, not copied (the record holds the pool and the slot's string).
        let handle = records.insert(record)
        timeouts.insert(handle: handle, deadline: deadline, sequence: id)
        return handle
    }

    @discardableResult
    mutating func remove(_ handle: LeaseHandle) -> Record {
        // A slot that used its last generations is never reused: its ids would repeat.
        let record = records.remove(
            handle, retiring: generations[handle.index] >= IdentifierGenerator.generationLimit - 1)
        timeouts.remove(handle: handle)
        if !restored.isEmpty, restored[record.id] == handle { restored[record.id] = nil }
        return record
    }

    /// Moves a lease's timeout (a renewal).
    mutating func renew(_ handle: LeaseHandle, expiresAt: AdInstant) {
        records[handle].expiresAt = expiresAt
        timeouts.remove(handle: handle)
        timeouts.insert(handle: handle, deadline: expiresAt.unixMilliseconds, sequence: records[handle].id)
    }

    /// Notes how lease `id` ended, forgetting the oldest beyond ``endedMemory``.
    mutating func noteEnded(_ id: UInt64, _ cause: EndCause) {
        if ended.count < Self.endedMemory {
            ended.append((id, cause))
        } else {
            ended[endedNext] = (id, cause)
        }
        endedNext = (endedNext + 1) % Self.endedMemory
    }

    /// Why `id` names no open lease: how it ended when that is remembered, else whether it
    /// ever named one (its slot's generation has moved past it).
    func endCause(of id: UInt64, ids: IdentifierGenerator) -> EndCause {
        if let entry = ended.last(where: { $0.id == id }) { return entry.cause }
        let lender = IdentifierGenerator.replica(of: id)
        // Index 0 names no replica (ids of a daemon outside a fleet, or made up): "never lent".
        if lender != ids.replica && lender != 0 { return .lentByReplica(lender) }
        let (slot, generation) = ids.leaseSlot(of: id)
        if slot < generations.count, generation < generations[slot] { return .endedLongAgo }
        return .neverLent
    }

    /// A lease whose timeout is at or before `now`, if any.
    func firstDue(at now: AdInstant) -> LeaseHandle? {
        guard let first = timeouts.first, first.deadline <= now.unixMilliseconds else { return nil }
        return first.handle
    }

    /// Every open lease handle (for shutdown), in a deterministic order.
    var allHandles: [LeaseHandle] { timeouts.unorderedEntries.map(\.handle) }
}
