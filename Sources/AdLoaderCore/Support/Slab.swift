/// A typed index into a ``Slab``: each kind of record has its own handle type, so an ad's
/// handle can never be used where a lease's is expected.
protocol SlabHandle: Hashable {
    /// The slot in the slab's storage, 0, 1, 2, ...
    var index: Int { get }
    init(index: Int)
}

/// Records stored in an array with a free list, named by small dense handles.
///
/// Inserting reuses the most recently freed slot, so handles stay dense and a heap or table
/// that refers to records by handle can itself be an array indexed by ``SlabHandle/index``.
/// Reading or editing a record through its handle is one array access; nothing is copied.
///
/// - Important: a handle is valid from its ``insert(_:)`` until its ``remove(_:)``; using it
///   afterwards traps (or names a later record that reused the slot).
struct Slab<Handle: SlabHandle, Element> {
    private var elements: [Element?] = []
    private var freeIndices: [Int] = []
    /// Live records.
    private(set) var count = 0

    init() {}

    /// The record of a live handle. Mutations through it edit the record in place.
    subscript(handle: Handle) -> Element {
        get { elements[handle.index]! }
        _modify { yield &elements[handle.index]! }
    }

    /// The handle the next ``insert(_:)`` returns.
    var nextHandle: Handle { Handle(index: freeIndices.last ?? elements.count) }

    /// Stores `element` and returns its handle.
    mutating func insert(_ element: consuming Element) -> Handle {
        count += 1
        if let index = freeIndices.popLast() {
            elements[index] = element
            return Handle(index: index)
        }
        elements.append(element)
        // Grow the free list with the slab, while inserting: growing it later, in a sweep that
        // frees thousands of records, would be a large allocation there, and glibc runs its
        // deferred consolidation of every small chunk freed so far on such an allocation
        // (measured: 170 ms in one callback after freeing 500k ads).
        if freeIndices.capacity < elements.count { freeIndices.reserveCapacity(elements.capacity) }
        return Handle(index: elements.count - 1)
    }

    /// Whether `handle` names a live record (false for a freed slot or one never used).
    func isLive(_ handle: Handle) -> Bool {
        handle.index >= 0 && handle.index < elements.count && elements[handle.index] != nil
    }

    /// Calls `body` with every live record and its handle, in slot order.
    func forEachLive(_ body: (Handle, Element) -> Void) {
        for index in elements.indices {
            if let element = elements[index] { body(Handle(index: index), element) }
        }
    }

    /// Frees the record of `handle` and returns it; the slot is reused by a later insert,
    /// unless `retiring`: then it is never used again.
    @discardableResult
    mutating func remove(_ handle: Handle, retiring: Bool = false) -> Element {
        let element = elements[handle.index].take()!
        if !retiring { freeIndices.append(handle.index) }
        count -= 1
        return element
    }
}
