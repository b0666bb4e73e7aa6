/// Names one open lease in the loader's ``LeaseTable``.
struct LeaseHandle: SlabHandle {
    let index: Int
}
