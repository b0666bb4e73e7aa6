import AdLoaderCore
import AdLoaderLogging

/// Logs what the loader reports about caps that bind: a warning when a pool starts being held
/// back by a configured cap, naming the setting (at most one per pool and cap per
/// ``interval``, so a pool flapping at its cap does not flood the log), an info line when it is
/// no longer held back, and once per source an ad that arrived too short to be lent.
///
/// - Important: loop-confined like the loader.
final class CapWarnings {
    static let interval: Int64 = 60_000

    private let logger: Logger
    private let clock: any AdClock
    /// When the last warning for (loader, ad unit, cap) went out, Unix milliseconds.
    private var lastWarning: [String: Int64] = [:]
    /// Pools a warning was logged for and that are still held back.
    private var warned: Set<String> = []

    init(logger: Logger, clock: any AdClock) {
        self.logger = logger
        self.clock = clock
    }

    /// Sets the loader's callbacks to log through this.
    func attach(to loader: NativeAdvertisementLoader) {
        loader.onHeldBack = { [weak self] loader, unit, cap, setting in
            self?.heldBack(loader: loader, adUnitID: unit, cap: cap, setting: setting)
        }
        loader.onExpiredOnArrival = { [weak self] loader, source, minimum in
            self?.logger.warning(
                "ads arrive with less than the minimum remaining life and are dropped unlent (logged once per source)",
                [
                    "loader": .string(loader), "source": .string(source),
                    "minimum_remaining_life_ms": .int(minimum.milliseconds),
                    "setting": .string("loaders.\(loader).minimumRemainingLife"),
                ])
        }
    }

    private func heldBack(loader: String, adUnitID: String, cap: HoldBack?, setting: String?) {
        let pool = "\(loader)\u{0}\(adUnitID)"
        guard let cap, let setting else {
            if warned.remove(pool) != nil {
                logger.info("pool no longer held back", ["loader": .string(loader), "ad_unit_id": .string(adUnitID)])
            }
            return
        }
        let key = "\(pool)\u{0}\(cap.name)"
        let now = clock.now.unixMilliseconds
        if let last = lastWarning[key], now - last < Self.interval { return }
        lastWarning[key] = now
        warned.insert(pool)
        logger.warning(
            "pool held back below its demand by a configured cap",
            [
                "loader": .string(loader), "ad_unit_id": .string(adUnitID), "cap": .string(cap.name),
                "setting": .string(setting),
            ])
    }
}
