/// Stands in for an ``AdPool`` in the closures that must not keep it alive (timers, parked
/// borrows): they hold this object weakly, and it lives exactly as long as its pool.
///
/// A weak reference to the pool itself would give the pool a side table, and every retain
/// and release of an object with one takes the runtime's slow path (~50 instructions each,
/// callgrind); pools are retained on every Borrow and Return, this object never.
final class AdPoolReference {
    /// Valid while this object is: only the pool holds it strongly.
    unowned(unsafe) let pool: AdPool

    init(_ pool: AdPool) {
        self.pool = pool
    }
}
