import AdLoaderCore
import AdLoaderWire
import Foundation

/// Prints answers as readable text or as JSON (`--json`).
struct Output {
    var json: Bool

    // MARK: - Commands

    func prefetch(_ result: PrefetchResult) {
        if json {
            emit(ProtoJSON.prefetch(result))
        } else {
            line("available \(result.available), in flight \(result.inFlight), requested now \(result.requested)")
        }
    }

    func borrow(_ result: BorrowResult) {
        if json {
            emit(ProtoJSON.borrow(result))
            return
        }
        switch result {
        case .leased(let lease, let reused):
            let slot = lease.slot.map { " for slot \($0)" } ?? ""
            line("\(reused ? "reused" : "leased") lease \(lease.id)\(slot), returns by \(Self.time(lease.expiresAt))")
            describe(lease.ad)
            line("return it with: adloader return \(lease.id) [--shown]")
        case .noAdYet:
            line("no ad yet (the pool is empty; a top-up has started)")
        case .unavailable:
            line("unavailable")
        case .upstreamFailed(let error):
            line("upstream failed: \(error)")
        }
    }

    func returned(leaseID: UInt64, outcome: ReturnOutcome?) {
        if json {
            emit(ProtoJSON.returned(outcome))
        } else {
            let text =
                switch outcome {
                case .backInPool: "back in the pool for the next cell"
                case .consumed: "consumed (reached its show count)"
                case .expired: "expired, dropped"
                case .removed: "removed (its loader was disabled or reconfigured, or its creative invalidated)"
                case .invalidated: "invalidated: removed, its creative blocked for the loader's invalidationBlockTime"
                case nil: "outcome unspecified"
                }
            line("lease \(leaseID) returned: \(text)")
        }
    }

    func appOpen(_ answer: AppOpenResponseMessage) {
        let flags: [(String, Bool)] = [
            ("firstLaunch", answer.flags.firstLaunch), ("coldStart", answer.flags.coldStart),
            ("thresholdReached", answer.flags.thresholdReached),
            ("sessionCapReached", answer.flags.sessionCapReached), ("dailyCapReached", answer.flags.dailyCapReached),
            ("fromUnlock", answer.flags.fromUnlock), ("storeUnavailable", answer.storeUnavailable),
        ]
        if json {
            emit(ProtoJSON.appOpen(answer))
            return
        }
        let why = answer.reason.map { "\($0)" } ?? "unspecified"
        switch answer.outcome {
        case .show: line("show: \(why)")
        case .skip: line("skip: \(why)")
        case .noAdReady: line("no ad ready: the policy says show (\(why)), but the pool is empty; nothing counted")
        case .unknown: line("outcome unspecified (\(why))")
        }
        line(
            "  shows so far: \(answer.counts.session) this session, \(answer.counts.day) on \(answer.day) (device's day)"
        )
        if answer.reserved != AppOpenCounts() {
            line(
                "  reserved (shows decided, not yet returned shown): \(answer.reserved.session) this session, \(answer.reserved.day) today"
            )
        }
        let set = flags.filter(\.1).map(\.0)
        line("  flags: " + (set.isEmpty ? "none" : set.joined(separator: ", ")))
        if let lease = answer.lease {
            line("leased lease \(lease.id), returns by \(Self.time(lease.expiresAt))")
            describe(lease.ad)
            line("once displayed: adloader return \(lease.id) --shown   (counts move only then)")
        }
    }

    static func name(_ reason: AppOpenDecision.Reason) -> String {
        switch reason {
        case .firstLaunch: "FIRST_LAUNCH"
        case .coldStart: "COLD_START"
        case .hotStart: "HOT_START"
        case .firstLaunchExcluded: "FIRST_LAUNCH_EXCLUDED"
        case .coldStartExcluded: "COLD_START_EXCLUDED"
        case .belowThreshold: "BELOW_THRESHOLD"
        case .fromUnlock: "FROM_UNLOCK"
        case .sessionCapReached: "SESSION_CAP_REACHED"
        case .dailyCapReached: "DAILY_CAP_REACHED"
        case .storeUnavailable: "STORE_UNAVAILABLE"
        }
    }

    /// - Parameters:
    ///   - instance: the answering daemon's instance name (empty from an older server).
    ///   - feeds: the feed plan's counters (PROTOCOL.md 7.11), a line under the pools when any is set.
    ///   - poolStore: what the pool store gave back at start, a line under the pools when set.
    func stats(
        _ pools: [PoolStats], sources: [DemandSourceStats] = [], loaders: [LoaderState] = [], instance: String = "",
        feeds: FeedStats = FeedStats(), poolStore: PoolStoreStats? = nil
    ) {
        if json {
            emit(
                ProtoJSON.stats(
                    pools, sources: sources, loaders: loaders, instance: instance, feeds: feeds, poolStore: poolStore))
            return
        }
        defer {
            loaderTable(loaders)
            sourceTable(sources)
            if feeds != FeedStats() {
                line("")
                line(
                    "feeds held \(feeds.feedsHeld), positions planned \(feeds.positionsPlanned), filled "
                        + "\(feeds.positionsFilled), rendered empty \(feeds.positionsEmpty), coming answers "
                        + "\(feeds.comingAnswers), separation holds \(feeds.separationHolds), feeds expired "
                        + "\(feeds.feedsExpired), refused \(feeds.feedsRefused), guarantees lost \(feeds.guaranteesLost)"
                )
            }
            if let s = poolStore {
                line("")
                line(
                    "pool store: restored from \(s.restoredFrom.isEmpty ? "nothing" : s.restoredFrom), ads \(s.restoredAds), "
                        + "leases \(s.restoredLeases), expired while down \(s.expiredWhileDown), reclaimed leases "
                        + "\(s.reclaimedLeases), dropped \(s.droppedAds), uncertain \(s.uncertainAds), down \(s.downMilliseconds) ms, "
                        + "restore \(s.restoreMilliseconds) ms; journal \(s.journalBytes) B, \(s.journalCommits) writes, "
                        + "\(s.journalCheckpoints) checkpoints, write failures \(s.writeFailures)")
            }
            if !instance.isEmpty { line("instance \(instance)") }
        }
        guard !pools.isEmpty else {
            line("no pools yet (a pool appears with the first prefetch or borrow of an ad unit)")
            return
        }
        let header = [
            "LOADER", "AD UNIT", "AVAIL", "LEASED", "IN FLIGHT", "PARKED", "TARGET", "IDLE", "LOADED", "EXPIRED",
            "CONSUMED", "REMOVED",
            "UPSTREAM", "FAILED", "HITS", "MISSES", "RECLAIMED",
        ]
        var rows = [header]
        for p in pools {
            rows.append(
                [
                    p.loader, p.adUnitID, "\(p.available)", "\(p.leased)", "\(p.inFlight)", "\(p.parkedBorrows)",
                    "\(p.target)",
                    p.idle ? "yes" : "no", "\(p.loaded)",
                    "\(p.expired)", "\(p.consumed)", "\(p.removed)", "\(p.upstreamRequests)", "\(p.upstreamFailures)",
                    "\(p.borrowHits)", "\(p.borrowMisses)", "\(p.leasesReclaimed)",
                ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            line(
                row.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column < 2 ? cell + pad : pad + cell
                }.joined(separator: "  "))
        }
    }

    /// The loaders of a Stats answer: enabled, pools, blocked creatives (only those that are
    /// not plain: a disabled loader or one with blocked creatives; all when any is).
    private func loaderTable(_ loaders: [LoaderState]) {
        guard loaders.contains(where: { !$0.enabled || $0.blockedCreatives > 0 }) else { return }
        line("")
        let rows =
            [["LOADER", "ENABLED", "SOURCE", "POOLS", "BLOCKED CREATIVES"]]
            + loaders.map {
                [$0.name, $0.enabled ? "yes" : "NO (disabled)", $0.source, "\($0.pools)", "\($0.blockedCreatives)"]
            }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let text = row.enumerated().map { column, cell in
                cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
            line(String(text.reversed().drop { $0 == " " }.reversed()))
        }
    }

    func loaderSwitched(_ loader: String, enabled: Bool, changed: Bool) {
        if json {
            emit(ProtoJSON.loaderSwitched(changed: changed))
        } else if changed {
            line(
                enabled
                    ? "loader \(loader) enabled: it fills and lends again"
                    : "loader \(loader) disabled: its ads dropped, parked borrows answered UNAVAILABLE, borrows refused"
            )
        } else {
            line("loader \(loader) was already \(enabled ? "enabled" : "disabled"): nothing changed")
        }
    }

    func plan(_ plan: FeedPlan, request: PlanRequestMessage) {
        if json {
            emit(ProtoJSON.plan(plan))
            return
        }
        let window = "\(request.firstVisible)-\(request.lastVisible) + \(request.ahead) ahead"
        line(
            "feed \(request.feedID), positions \(window): \(plan.positions.count) ad positions\(plan.created ? " (new feed)" : "")"
        )
        for planned in plan.positions {
            let visible = planned.position >= Int(request.firstVisible) && planned.position <= Int(request.lastVisible)
            let place = "  \(planned.position)\(visible ? "" : " (ahead)"):"
            switch planned.state {
            case .ad(let lease):
                let content = lease.ad.creative.nativeContent
                let what = content.map { "\"\($0.headline)\" by \($0.advertiser)" } ?? lease.ad.format.name
                line("\(place) lease \(lease.id), ad \(lease.ad.id): \(what)")
            case .coming: line("\(place) coming (no ad within the separation rules yet; plan again)")
            case .empty: line("\(place) empty (rendered without an ad; stays so)")
            }
        }
    }

    func serverInfo(_ info: ServerInfoResponseMessage) {
        if json {
            emit([
                "version": info.version, "build": info.build, "instance": info.instance,
                "uptimeMs": info.uptimeMilliseconds, "features": info.features, "protocol": info.protocolVersion,
            ])
            return
        }
        line("adloaderd \(info.version) (\(info.build)), \(info.protocolVersion)")
        line("  instance: \(info.instance.isEmpty ? "(unnamed)" : info.instance)")
        line("  uptime:   \(info.uptimeMilliseconds / 1000) s")
        line("  features: \(info.features.isEmpty ? "(none)" : info.features.joined(separator: ", "))")
    }

    func reloaded(_ result: ReconfigureResult) {
        if json {
            emit(ProtoJSON.reloaded(result))
            return
        }
        line(result.changedAnything ? "configuration reloaded" : "configuration reloaded: no loader changed")
        for (label, names) in [
            ("added", result.added), ("removed (ads dropped, leases end when returned)", result.removed),
            ("changed, pools and leases kept", result.changedKeepingPools),
            ("changed, pools dropped (source, format or request)", result.changedDroppingPools),
            ("unchanged", result.unchanged),
        ] where !names.isEmpty {
            line("  \(label): \(names.joined(separator: ", "))")
        }
    }

    func event(_ event: AdEvent) {
        if json {
            emit(ProtoJSON.event(event), pretty: false)
        } else {
            var parts = [Self.time(event.at), event.kind.wireName, "\(event.loader)/\(event.adUnitID)"]
            if let id = event.adID { parts.append("ad=\(id)") }
            if let lease = event.leaseID { parts.append("lease=\(lease)") }
            if let slot = event.slot { parts.append("slot=\(slot)") }
            if event.kind == .returned { parts.append("shown=\(event.shown)") }
            if event.kind == .loadFinished { parts.append("count=\(event.count)") }
            if event.kind == .restored, let restored = event.restoration {
                parts.append("from=\(restored.origin?.rawValue ?? "?") ads=\(event.count)")
                parts.append("leases=\(restored.leases) expired=\(restored.expired)")
            }
            if let error = event.error { parts.append("error=\"\(error)\"") }
            if let reason = event.reason { parts.append("reason=\(reason.wireName)") }
            if let note = event.note { parts.append("note=\"\(note)\"") }
            line(parts.joined(separator: " "))
        }
        fflush(nil)
    }

    // MARK: - Pieces

    private func describe(_ ad: Ad) {
        if let fullScreen = ad.creative.fullScreenCreative {
            describe(ad, fullScreen)
            return
        }
        let c = Self.nativeContent(of: ad)
        line("  ad \(ad.id) (\(ad.loader)/\(ad.adUnitID)), shown \(ad.showCount)×, expires \(Self.time(ad.expiresAt))")
        line("  \"\(c.headline)\"" + (c.advertiser.isEmpty ? "" : " by \(c.advertiser)"))
        if !c.body.isEmpty { line("  \(c.body)") }
        var details: [String] = []
        if !c.callToAction.isEmpty { details.append("[\(c.callToAction)]") }
        if let rating = c.starRating { details.append("★ \(rating)") }
        if let price = c.price { details.append(price) }
        if let store = c.store { details.append(store) }
        if !details.isEmpty { line("  " + details.joined(separator: "  ")) }
        if !c.clickURL.isEmpty { line("  click: \(c.clickURL)") }
        if let icon = c.icon { line("  icon:  \(icon.url) (\(icon.width)×\(icon.height))") }
        if let image = c.image { line("  image: \(image.url) (\(image.width)×\(image.height))") }
    }

    private func describe(_ ad: Ad, _ creative: FullScreenCreative) {
        line(
            "  \(ad.format) ad \(ad.id) (\(ad.loader)/\(ad.adUnitID)), shown \(ad.showCount)×, expires \(Self.time(ad.expiresAt))"
        )
        var shape = ["\(creative.orientation)"]
        if creative.width > 0 || creative.height > 0 { shape.append("\(creative.width)×\(creative.height)") }
        if let reward = creative.reward { shape.append("reward \(reward.amount) \(reward.type)") }
        line("  " + shape.joined(separator: ", "))
        switch creative.media {
        case .markup(let markup): line("  markup (\(markup.utf8.count) bytes): \(markup.prefix(100))")
        case .videoURL(let url): line("  video: \(url)")
        case .vastXML(let document): line("  VAST (\(document.utf8.count) bytes): \(document.prefix(100))")
        }
    }

    static func time(_ instant: AdInstant) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(instant.unixMilliseconds) / 1000))
    }

    /// The ad's native assets (all empty for a full-screen ad).
    static func nativeContent(of ad: Ad) -> NativeAdContent {
        ad.creative.nativeContent ?? NativeAdContent(headline: "")
    }

    /// The sources' counters under the pools, when any source keeps some.
    private func sourceTable(_ sources: [DemandSourceStats]) {
        guard !sources.isEmpty else { return }
        let header = [
            "SOURCE", "REQUESTS", "NO FILL", "BIDS", "DROPPED", "FAILED", "NOTICES", "NOTICES FAILED",
            "NOTICES DROPPED",
        ]
        var rows = [header]
        for s in sources {
            rows.append(
                [
                    s.name, "\(s.requests)", "\(s.noFills)", "\(s.bids)", "\(s.bidsDropped)", "\(s.failures)",
                    "\(s.noticesSent)", "\(s.noticesFailed)", "\(s.noticesDropped)",
                ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        line("")
        for row in rows {
            line(
                row.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + pad : pad + cell
                }.joined(separator: "  "))
        }
    }

    /// A call that ended with a status, in --json mode: google.rpc.Status's JSON mapping.
    func status(_ status: Status) {
        emit(ProtoJSON.status(code: status.code, message: status.message))
    }

    private func emit(_ object: [String: Any], pretty: Bool = true) {
        let options: JSONSerialization.WritingOptions =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else {
            line("{\"error\": \"cannot encode the answer as JSON\"}")
            return
        }
        line(String(decoding: data, as: UTF8.self))
    }

    private func line(_ text: String) { print(text) }
}
