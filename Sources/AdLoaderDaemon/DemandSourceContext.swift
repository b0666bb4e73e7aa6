public import AdLoaderCore
public import AdLoaderLogging
public import AdLoaderUV

/// What a ``DemandSourceType`` may use to build a source: the loader's clock and scheduler,
/// the event loop for sources that do I/O, the logger; and where a built source registers how
/// to stop it (the daemon runs those stops, in reverse, before the loop closes).
///
/// - Important: loop-confined.
public final class DemandSourceContext {
    public let clock: any AdClock
    public let scheduler: any AdScheduler
    /// The daemon's loop; nil when sources are built without one (tests of pure sources): a
    /// type that needs it throws ``ConfigError``.
    public let loop: UVLoop?
    public let logger: Logger
    /// Where a source keeps notices not yet delivered across restarts (the pool store); nil:
    /// memory only (`poolStore.type` off).
    public let noticeStore: (any NoticeOutboxStore)?
    /// The name of the source being built (its key under `sources`), for the settings its
    /// messages name; set by the daemon before each ``DemandSourceType`` builds one.
    public internal(set) var sourceName = ""
    private(set) var stops: [() -> Void] = []

    public init(
        clock: any AdClock, scheduler: any AdScheduler, loop: UVLoop? = nil, logger: Logger = Logger(),
        noticeStore: (any NoticeOutboxStore)? = nil
    ) {
        self.noticeStore = noticeStore
        self.clock = clock
        self.scheduler = scheduler
        self.loop = loop
        self.logger = logger
    }

    /// Registers how to stop (close the handles of) a built source.
    public func onStop(_ stop: @escaping () -> Void) { stops.append(stop) }

    /// Runs the registered stops in reverse order, once.
    public func stopSources() {
        while let stop = stops.popLast() { stop() }
    }
}
