import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// The happy path of the calls the other checks reach only through their refusals: ServerInfo,
/// SetLoaderEnabled, Reload and AppOpen. ``ConformanceSuite/roundTripChecks`` names, for every
/// method of ``MethodName/all``, the check that makes an OK call of it, on both transports.
extension ConformanceRun {
    static var roundTripChecks: [Check] {
        [
            Check(name: "serverinfo.round-trip") { try $0.serverInfoRoundTrip() },
            Check(name: "control.set-loader-enabled-round-trip") { try $0.setLoaderEnabledRoundTrip() },
            Check(name: "control.reload-round-trip") { try $0.reloadRoundTrip() },
            Check(name: "appopen.round-trip") { try $0.appOpenRoundTrip() },
            Check(name: "watch.round-trip") { try $0.watchRoundTrip() },
            Check(name: "plan.round-trip") { try $0.planRoundTrip() },
            Check(name: "plan.invalid-window") { try $0.planInvalidWindow() },
        ]
    }

    func watchRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let adUnit = freshAdUnit("watch-round-trip")
        // A borrow on an empty pool starts a fill; the Watch opened right after sees its events
        // (when the source answers after the Watch started: not asserted, counted).
        _ = try connection.call(MethodName.borrow, Requests.borrow(adUnit, loader: loader))
        let result = try connection.call(
            MethodName.watch, Requests.watch(loader: loader, adUnitID: adUnit), timeoutMilliseconds: 300, metadata: [])
        guard result.status.code == .deadlineExceeded else {
            throw CheckFailure("a Watch with a 300 ms deadline ended \(result.status), expected DEADLINE_EXCEEDED")
        }
        for message in result.messages {
            let event = try decode(EventMessage.self, message, "Watch event").event
            if event.adUnitID != adUnit {
                throw CheckFailure("a Watch of ad unit \(adUnit) streamed an event of \(event.adUnitID)")
            }
        }
        return .passed("\(result.messages.count) events of \(adUnit), then \(result.status)")
    }

    /// Plan twice over the same window: every ad position answered with an ad keeps its lease
    /// and ad; a position answered empty stays empty; positions are ascending.
    func planRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let adUnit = freshAdUnit("plan-round-trip")
        _ = try connection.call(MethodName.prefetch, Requests.prefetch(adUnit, loader: loader))
        let request = PlanRequestMessage(
            feedID: "conformance-\(adUnit)", adUnitID: adUnit, loader: loader, firstVisible: 0, lastVisible: 0,
            ahead: 30)
        let first = try connection.call(MethodName.plan, request, as: PlanResponseMessage.self).plan
        let second = try connection.call(MethodName.plan, request, as: PlanResponseMessage.self).plan
        let positions = first.positions.map(\.position)
        if positions != positions.sorted() || Set(positions).count != positions.count {
            throw CheckFailure("Plan positions not ascending and distinct: \(positions)")
        }
        if second.positions.map(\.position) != positions {
            throw CheckFailure(
                "the same window planned twice answered positions \(positions), then \(second.positions.map(\.position))"
            )
        }
        if !first.created || second.created { throw CheckFailure("created: \(first.created), then \(second.created)") }
        var ads = 0
        for (a, b) in zip(first.positions, second.positions) {
            switch (a.state, b.state) {
            case (.ad(let x), .ad(let y)):
                if x.id != y.id || x.ad.id != y.ad.id { throw CheckFailure("position \(a.position) changed its ad") }
                ads += 1
            case (.ad, _): throw CheckFailure("position \(a.position) lost its ad")
            case (.empty, let state) where state != .empty:
                throw CheckFailure("position \(a.position) rendered empty got \(state)")
            default: break
            }
        }
        return .passed("\(positions.count) ad positions, \(ads) with the same lease twice")
    }

    func planInvalidWindow() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let status = try connection.call(
            MethodName.plan,
            PlanRequestMessage(feedID: "f", adUnitID: "u", loader: loader, firstVisible: 5, lastVisible: 4)
        ).expect(.invalidArgument, naming: "last_visible", "Plan with last_visible before first_visible")
        try connection.call(
            MethodName.plan,
            PlanRequestMessage(feedID: "", adUnitID: "u", loader: loader, firstVisible: 0, lastVisible: 4)
        )
        .expect(.invalidArgument, naming: "feed_id", "Plan with an empty feed_id")
        try connection.call(
            MethodName.plan,
            PlanRequestMessage(
                feedID: "f", adUnitID: "u", loader: loader, firstVisible: 0, lastVisible: 4, ahead: 100_000)
        ).expect(.invalidArgument, naming: "visible", "Plan of a window beyond 512 positions")
        return .passed("\(status)")
    }

    func serverInfoRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let first = try connection.call(
            MethodName.serverInfo, ServerInfoRequestMessage(), as: ServerInfoResponseMessage.self)
        if first.version.isEmpty { throw CheckFailure("ServerInfo answered an empty version") }
        if first.protocolVersion != BuildInfo.protocolVersion {
            throw CheckFailure(
                "ServerInfo protocol \"\(first.protocolVersion)\", expected \"\(BuildInfo.protocolVersion)\"")
        }
        if first.features != first.features.sorted() {
            throw CheckFailure("ServerInfo features not sorted: \(first.features)")
        }
        let second = try connection.call(
            MethodName.serverInfo, ServerInfoRequestMessage(), as: ServerInfoResponseMessage.self)
        if second.uptimeMilliseconds < first.uptimeMilliseconds {
            throw CheckFailure("uptime went back: \(first.uptimeMilliseconds) ms, then \(second.uptimeMilliseconds) ms")
        }
        return .passed(
            "\(first.version) (\(first.build)), instance \"\(first.instance)\", features \(first.features.joined(separator: ","))"
        )
    }

    func setLoaderEnabledRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        // Enabling the loader under test, already enabled: OK, nothing changed, nothing disturbed.
        let answer = try connection.call(
            MethodName.setLoaderEnabled, SetLoaderEnabledRequestMessage(loader: loader, enabled: true),
            as: SetLoaderEnabledResponseMessage.self)
        if answer.changed { throw CheckFailure("enabling the enabled loader \"\(loader)\" answered changed: true") }
        let stats = try connection.call(
            MethodName.stats, StatsRequestMessage(loader: loader, adUnitID: ""), as: StatsResponseMessage.self)
        guard let state = stats.loaders.first(where: { $0.name == loader }), state.enabled else {
            throw CheckFailure("Stats does not list loader \"\(loader)\" as enabled after SetLoaderEnabled")
        }
        return .passed("enable \"\(loader)\": changed false, Stats says enabled")
    }

    func reloadRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let result = try connection.call(MethodName.reload, ReloadRequestMessage())
        switch result.status.code {
        case .ok:
            let answer = try decode(ReloadResponseMessage.self, try result.okMessage("Reload"), "Reload")
            // The same file read again: nothing added or removed.
            if !answer.result.added.isEmpty || !answer.result.removed.isEmpty {
                throw CheckFailure(
                    "reloading an unchanged configuration added \(answer.result.added), removed \(answer.result.removed)"
                )
            }
            return .passed("unchanged: \(answer.result.unchanged.joined(separator: ","))")
        case .failedPrecondition where result.status.message.contains("without a configuration"):
            return .skipped("the daemon was started without a configuration file: \(result.status)")
        default:
            throw CheckFailure("Reload answered \(result.status)")
        }
    }

    func appOpenRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let stats = try connection.call(MethodName.stats, StatsRequestMessage(), as: StatsResponseMessage.self)
        // The loader of format appOpen, found by asking each: the others answer FAILED_PRECONDITION.
        for state in stats.loaders {
            let request = AppOpenRequestMessage(
                request: AppOpenRequest(deviceID: freshAdUnit("device"), sessionID: "s-1", event: .launch),
                adUnitID: freshAdUnit("app-open"), loader: state.name)
            let result = try connection.call(MethodName.appOpen, request)
            if result.status.code == .failedPrecondition { continue }
            let answer = try decode(AppOpenResponseMessage.self, try result.okMessage("AppOpen"), "AppOpen")
            switch answer.outcome {
            case .show:
                guard let lease = answer.lease else { throw CheckFailure("AppOpen answered SHOW without a lease") }
                // Not shown: the device's counts do not move.
                _ = try connection.call(MethodName.returnLease, ReturnRequestMessage(leaseID: lease.id, shown: false))
                    .okMessage("Return of the app-open lease")
            case .skip, .noAdReady:
                if answer.lease != nil { throw CheckFailure("AppOpen answered \(answer.outcome) with a lease") }
            case .unknown:
                throw CheckFailure("AppOpen answered an unknown outcome")
            }
            return .passed("loader \"\(state.name)\": \(answer.outcome)")
        }
        return .skipped("no loader of format appOpen among \(stats.loaders.map(\.name))")
    }
}

extension ConformanceSuite {
    /// For every method of the service (``MethodName/all``), the transport-neutral check that
    /// makes an OK call of it. A method added to the list without one fails the suite's tests.
    public static let roundTripChecks: [String: String] = [
        MethodName.prefetch: "prefetch.round-trip",
        MethodName.borrow: "borrow-return.round-trip",
        MethodName.returnLease: "borrow-return.round-trip",
        MethodName.stats: "stats.round-trip",
        MethodName.watch: "watch.round-trip",
        MethodName.appOpen: "appopen.round-trip",
        MethodName.setLoaderEnabled: "control.set-loader-enabled-round-trip",
        MethodName.reload: "control.reload-round-trip",
        MethodName.serverInfo: "serverinfo.round-trip",
        MethodName.plan: "plan.round-trip",
    ]
}
