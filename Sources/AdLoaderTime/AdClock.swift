/// The source of "now" for the core.
///
/// - Important: read only on the thread that owns the loader.
public protocol AdClock: AnyObject {
    var now: AdInstant { get }
}
