/// Names one ad record in its ``AdPool``'s slab.
struct AdHandle: SlabHandle {
    let index: Int
}
