import AdLoaderCore
import AdLoaderWire
import Foundation

/// Prints answers as readable text or as JSON (`--json`).
struct Output {
    var json: Bool

    // MARK: - Commands

    func prefetch(_ result: PrefetchResult) {
        if json {
            emit(["available": result.available, "inFlight": result.inFlight, "requested": result.requested])
        } else {
            line("available \(result.available), in flight \(result.inFlight), requested now \(result.requested)")
        }
    }

    func borrow(_ result: BorrowResult) {
        switch result {
        case .leased(let lease, let reused):
            if json {
                emit(["outcome": reused ? "REUSED" : "LEASED", "lease": Self.object(lease)])
            } else {
                let slot = lease.slot.map { " for slot \($0)" } ?? ""
                line("\(reused ? "reused" : "leased") lease \(lease.id)\(slot), returns by \(Self.time(lease.expiresAt))")
                describe(lease.ad)
                line("return it with: adloader return \(lease.id) [--shown]")
            }
        case .noAdYet:
            if json { emit(["outcome": "NO_AD_YET"]) } else { line("no ad yet (the pool is empty; a top-up has started)") }
        case .unavailable:
            if json { emit(["outcome": "UNAVAILABLE"]) } else { line("unavailable") }
        case .upstreamFailed(let error):
            if json { emit(["outcome": "UNAVAILABLE", "error": "\(error)"]) } else { line("upstream failed: \(error)") }
        }
    }

    func returned(leaseID: UInt64, outcome: ReturnOutcome?) {
        let name = Self.name(outcome)
        if json {
            emit(["leaseId": String(leaseID), "outcome": name])
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
        let reason = answer.reason.map(Self.name) ?? "UNSPECIFIED"
        let outcome =
            switch answer.outcome {
            case .show: "SHOW"
            case .skip: "SKIP"
            case .noAdReady: "NO_AD_READY"
            case .unknown: "UNSPECIFIED"
            }
        let flags: [(String, Bool)] = [
            ("firstLaunch", answer.flags.firstLaunch), ("thresholdReached", answer.flags.thresholdReached),
            ("sessionCapReached", answer.flags.sessionCapReached), ("dailyCapReached", answer.flags.dailyCapReached),
            ("fromUnlock", answer.flags.fromUnlock), ("storeUnavailable", answer.storeUnavailable),
        ]
        if json {
            var object: [String: Any] = [
                "outcome": outcome, "reason": reason, "sessionCount": answer.counts.session, "dailyCount": answer.counts.day,
                "day": answer.day, "flags": Dictionary(uniqueKeysWithValues: flags),
            ]
            if let lease = answer.lease { object["lease"] = Self.object(lease) }
            emit(object)
            return
        }
        let why = answer.reason.map { "\($0)" } ?? "unspecified"
        switch answer.outcome {
        case .show: line("show: \(why)")
        case .skip: line("skip: \(why)")
        case .noAdReady: line("no ad ready: the policy says show (\(why)), but the pool is empty; nothing counted")
        case .unknown: line("outcome unspecified (\(why))")
        }
        line("  shows so far: \(answer.counts.session) this session, \(answer.counts.day) on \(answer.day) (device's day)")
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
        case .belowThreshold: "BELOW_THRESHOLD"
        case .fromUnlock: "FROM_UNLOCK"
        case .sessionCapReached: "SESSION_CAP_REACHED"
        case .dailyCapReached: "DAILY_CAP_REACHED"
        case .storeUnavailable: "STORE_UNAVAILABLE"
        }
    }

    /// - Parameter instance: the answering daemon's instance name (empty from an older server).
    func stats(_ pools: [PoolStats], sources: [DemandSourceStats] = [], loaders: [LoaderState] = [], instance: String = "") {
        if json {
            emit([
                "pools": pools.map(Self.object), "sources": sources.map(Self.object),
                "loaders": loaders.map(Self.object), "instance": instance,
            ])
            return
        }
        defer {
            loaderTable(loaders)
            sourceTable(sources)
            if !instance.isEmpty { line("instance \(instance)") }
        }
        guard !pools.isEmpty else {
            line("no pools yet (a pool appears with the first prefetch or borrow of an ad unit)")
            return
        }
        let header = [
            "LOADER", "AD UNIT", "AVAIL", "LEASED", "IN FLIGHT", "PARKED", "TARGET", "IDLE", "LOADED", "EXPIRED", "CONSUMED", "REMOVED",
            "UPSTREAM", "FAILED", "HITS", "MISSES", "RECLAIMED",
        ]
        var rows = [header]
        for p in pools {
            rows.append(
                [
                    p.loader, p.adUnitID, "\(p.available)", "\(p.leased)", "\(p.inFlight)", "\(p.parkedBorrows)", "\(p.target)",
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
        let rows = [["LOADER", "ENABLED", "SOURCE", "POOLS", "BLOCKED CREATIVES"]]
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
            emit(["loader": loader, "enabled": enabled, "changed": changed])
        } else if changed {
            line(
                enabled
                    ? "loader \(loader) enabled: it fills and lends again"
                    : "loader \(loader) disabled: its ads dropped, parked borrows answered UNAVAILABLE, borrows refused")
        } else {
            line("loader \(loader) was already \(enabled ? "enabled" : "disabled"): nothing changed")
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
            emit([
                "added": result.added, "removed": result.removed, "changedKeepingPools": result.changedKeepingPools,
                "changedDroppingPools": result.changedDroppingPools, "unchanged": result.unchanged,
            ])
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
            emit(Self.object(event), pretty: false)
        } else {
            var parts = [Self.time(event.at), event.kind.wireName, "\(event.loader)/\(event.adUnitID)"]
            if let id = event.adID { parts.append("ad=\(id)") }
            if let lease = event.leaseID { parts.append("lease=\(lease)") }
            if let slot = event.slot { parts.append("slot=\(slot)") }
            if event.kind == .returned { parts.append("shown=\(event.shown)") }
            if event.kind == .loadFinished { parts.append("count=\(event.count)") }
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
        line("  \(ad.format) ad \(ad.id) (\(ad.loader)/\(ad.adUnitID)), shown \(ad.showCount)×, expires \(Self.time(ad.expiresAt))")
        var shape = ["\(creative.orientation)"]
        if creative.width > 0 || creative.height > 0 { shape.append("\(creative.width)×\(creative.height)") }
        if let reward = creative.reward { shape.append("reward \(reward.amount) \(reward.type)") }
        line("  " + shape.joined(separator: ", "))
        switch creative.media {
        case .markup(let markup): line("  markup (\(markup.utf8.count) bytes): \(markup.prefix(100))")
        case .videoURL(let url): line("  video: \(url)")
        }
    }

    static func name(_ outcome: ReturnOutcome?) -> String {
        switch outcome {
        case .backInPool: "BACK_IN_POOL"
        case .consumed: "CONSUMED"
        case .expired: "EXPIRED"
        case .removed: "REMOVED"
        case .invalidated: "INVALIDATED"
        case nil: "UNSPECIFIED"
        }
    }

    static func time(_ instant: AdInstant) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(instant.unixMilliseconds) / 1000))
    }

    static func object(_ lease: Lease) -> [String: Any] {
        var object: [String: Any] = ["leaseId": String(lease.id), "expiresAt": time(lease.expiresAt), "ad": object(lease.ad)]
        if let slot = lease.slot { object["slot"] = slot }
        return object
    }

    /// The ad's native assets (all empty for a full-screen ad).
    static func nativeContent(of ad: Ad) -> NativeAdContent {
        ad.creative.nativeContent ?? NativeAdContent(headline: "")
    }

    static func object(_ ad: Ad) -> [String: Any] {
        if let creative = ad.creative.fullScreenCreative {
            var fullScreen: [String: Any] = [
                "orientation": "\(creative.orientation)", "width": creative.width, "height": creative.height,
            ]
            switch creative.media {
            case .markup(let markup): fullScreen["markup"] = markup
            case .videoURL(let url): fullScreen["videoUrl"] = url
            }
            if let reward = creative.reward { fullScreen["reward"] = ["type": reward.type, "amount": reward.amount] }
            return [
                "id": ad.id, "adUnitId": ad.adUnitID, "loader": ad.loader, "format": ad.format.name,
                "fullScreen": fullScreen, "loadedAt": time(ad.loadedAt), "expiresAt": time(ad.expiresAt),
                "showCount": ad.showCount,
            ]
        }
        let c = nativeContent(of: ad)
        var object: [String: Any] = [
            "id": ad.id, "adUnitId": ad.adUnitID, "loader": ad.loader, "headline": c.headline, "body": c.body,
            "callToAction": c.callToAction, "advertiser": c.advertiser, "clickUrl": c.clickURL,
            "impressionTrackers": c.impressionTrackers, "clickTrackers": c.clickTrackers,
            "loadedAt": time(ad.loadedAt), "expiresAt": time(ad.expiresAt), "showCount": ad.showCount,
        ]
        func image(_ i: AdImage) -> [String: Any] { ["url": i.url, "width": i.width, "height": i.height] }
        if let icon = c.icon { object["icon"] = image(icon) }
        if let img = c.image { object["image"] = image(img) }
        if let rating = c.starRating { object["starRating"] = rating }
        if let price = c.price { object["price"] = price }
        if let store = c.store { object["store"] = store }
        if let url = c.adChoicesURL { object["adChoicesUrl"] = url }
        return object
    }

    static func object(_ p: PoolStats) -> [String: Any] {
        [
            "loader": p.loader, "adUnitId": p.adUnitID, "available": p.available, "leased": p.leased, "inFlight": p.inFlight,
            "parkedBorrows": p.parkedBorrows, "requestsInFlight": p.requestsInFlight, "target": p.target,
            "idle": p.idle, "loaded": p.loaded, "expired": p.expired, "consumed": p.consumed,
            "removed": p.removed, "upstreamRequests": p.upstreamRequests, "upstreamFailures": p.upstreamFailures,
            "borrowHits": p.borrowHits, "borrowMisses": p.borrowMisses, "leasesReclaimed": p.leasesReclaimed,
        ]
    }

    static func object(_ s: DemandSourceStats) -> [String: Any] {
        [
            "name": s.name, "requests": s.requests, "noFills": s.noFills, "bids": s.bids, "bidsDropped": s.bidsDropped,
            "failures": s.failures, "noticesSent": s.noticesSent, "noticesFailed": s.noticesFailed,
            "noticesDropped": s.noticesDropped,
        ]
    }

    /// The sources' counters under the pools, when any source keeps some.
    private func sourceTable(_ sources: [DemandSourceStats]) {
        guard !sources.isEmpty else { return }
        let header = [
            "SOURCE", "REQUESTS", "NO FILL", "BIDS", "DROPPED", "FAILED", "NOTICES", "NOTICES FAILED", "NOTICES DROPPED",
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

    static func object(_ e: AdEvent) -> [String: Any] {
        var object: [String: Any] = ["kind": e.kind.wireName, "at": time(e.at), "loader": e.loader, "adUnitId": e.adUnitID]
        if let id = e.adID { object["adId"] = id }
        if let lease = e.leaseID { object["leaseId"] = String(lease) }
        if let slot = e.slot { object["slot"] = slot }
        if e.kind == .returned { object["shown"] = e.shown }
        if e.kind == .loadFinished { object["count"] = e.count }
        if let error = e.error { object["error"] = error.description }
        if let reason = e.reason { object["reason"] = reason.wireName }
        if let note = e.note { object["note"] = note }
        return object
    }

    static func object(_ l: LoaderState) -> [String: Any] {
        [
            "name": l.name, "enabled": l.enabled, "source": l.source, "pools": l.pools,
            "blockedCreatives": l.blockedCreatives,
        ]
    }

    private func emit(_ object: [String: Any], pretty: Bool = true) {
        let options: JSONSerialization.WritingOptions = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else {
            line("{\"error\": \"cannot encode the answer as JSON\"}")
            return
        }
        line(String(decoding: data, as: UTF8.self))
    }

    private func line(_ text: String) { print(text) }
}
