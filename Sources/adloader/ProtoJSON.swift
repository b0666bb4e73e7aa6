import AdLoaderCore
import AdLoaderWire

/// The CLI's `--json`: each answer as the proto3 JSON mapping of its response message in
/// Proto/adloader/v1/adloader.proto, as protobuf's own printers write it with every field
/// (`always_print_fields_with_no_presence`): lowerCamelCase names, enums by their full name
/// (`BORROW_OUTCOME_LEASED`), 64-bit integers as strings (`"leaseId": "17774107471246458119"`,
/// `"expiresAtUnixMs": "1764441383817"`: the proto's times are int64 Unix milliseconds), 32-bit
/// integers and doubles as numbers, message fields only when set. A call that ends with a
/// status prints google.rpc.Status's mapping, `{"code": 14, "message": "..."}`.
/// Tests/python/test_cli_json.py parses every command's output with protobuf's parser.
enum ProtoJSON {
    static func int64(_ value: Int64) -> String { String(value) }
    static func uint64(_ value: UInt64) -> String { String(value) }

    static func prefetch(_ r: PrefetchResult) -> [String: Any] {
        ["available": r.available, "inFlight": r.inFlight, "requested": r.requested]
    }

    static func borrow(_ result: BorrowResult) -> [String: Any] {
        switch result {
        case .leased(let lease, let reused):
            ["outcome": reused ? "BORROW_OUTCOME_REUSED" : "BORROW_OUTCOME_LEASED", "lease": self.lease(lease)]
        case .noAdYet:
            ["outcome": "BORROW_OUTCOME_NO_AD_YET"]
        case .unavailable:
            status(code: .unavailable, message: "the loader shut down or was disabled")
        case .upstreamFailed(let error):
            status(code: .unavailable, message: "upstream failed: \(error)")
        }
    }

    static func status(code: Status.Code, message: String) -> [String: Any] {
        ["code": code.rawValue, "message": message]
    }

    static func returned(_ outcome: ReturnOutcome?) -> [String: Any] {
        let name =
            switch outcome {
            case .backInPool: "RETURN_OUTCOME_BACK_IN_POOL"
            case .consumed: "RETURN_OUTCOME_CONSUMED"
            case .expired: "RETURN_OUTCOME_EXPIRED"
            case .removed: "RETURN_OUTCOME_REMOVED"
            case .invalidated: "RETURN_OUTCOME_INVALIDATED"
            case nil: "RETURN_OUTCOME_UNSPECIFIED"
            }
        return ["outcome": name]
    }

    /// `PlanResponse`.
    static func plan(_ plan: FeedPlan) -> [String: Any] {
        [
            "positions": plan.positions.map { planned -> [String: Any] in
                switch planned.state {
                case .ad(let lease):
                    ["position": planned.position, "state": "PLANNED_STATE_AD", "lease": self.lease(lease)]
                case .coming: ["position": planned.position, "state": "PLANNED_STATE_COMING"]
                case .empty: ["position": planned.position, "state": "PLANNED_STATE_EMPTY"]
                }
            },
            "created": plan.created,
        ]
    }

    static func lease(_ lease: Lease) -> [String: Any] {
        [
            "leaseId": uint64(lease.id), "slotKey": lease.slot ?? "",
            "expiresAtUnixMs": int64(lease.expiresAt.unixMilliseconds),
            "ad": ad(lease.ad),
        ]
    }

    static func format(_ format: AdFormat) -> String {
        switch format {
        case .native: "AD_FORMAT_UNSPECIFIED"  // as the server sends native ads (the field predates formats)
        case .interstitial: "AD_FORMAT_INTERSTITIAL"
        case .rewarded: "AD_FORMAT_REWARDED"
        case .appOpen: "AD_FORMAT_APP_OPEN"
        }
    }

    static func ad(_ ad: Ad) -> [String: Any] {
        let c = ad.creative.nativeContent ?? NativeAdContent(headline: "")
        var object: [String: Any] = [
            "id": ad.id, "adUnitId": ad.adUnitID, "loader": ad.loader, "format": format(ad.format),
            "headline": c.headline, "body": c.body, "callToAction": c.callToAction, "advertiser": c.advertiser,
            "starRating": c.starRating ?? 0, "price": c.price ?? "", "store": c.store ?? "", "clickUrl": c.clickURL,
            "impressionTrackers": c.impressionTrackers, "clickTrackers": c.clickTrackers,
            "adChoicesUrl": c.adChoicesURL ?? "",
            "loadedAtUnixMs": int64(ad.loadedAt.unixMilliseconds),
            "expiresAtUnixMs": int64(ad.expiresAt.unixMilliseconds),
            "showCount": ad.showCount,
        ]
        func image(_ i: AdImage) -> [String: Any] { ["url": i.url, "width": i.width, "height": i.height] }
        if let icon = c.icon { object["icon"] = image(icon) }
        if let img = c.image { object["image"] = image(img) }
        if let creative = ad.creative.fullScreenCreative {
            var fullScreen: [String: Any] = [
                "orientation": orientation(creative.orientation), "width": creative.width, "height": creative.height,
            ]
            switch creative.media {
            case .markup(let markup): fullScreen["markup"] = markup
            case .videoURL(let url): fullScreen["videoUrl"] = url
            case .vastXML(let document): fullScreen["vastXml"] = document
            }
            if let reward = creative.reward {
                fullScreen["reward"] = ["type": reward.type, "amount": String(reward.amount)]
            }
            object["fullScreen"] = fullScreen
        }
        return object
    }

    static func orientation(_ orientation: FullScreenCreative.Orientation) -> String {
        switch orientation {
        case .any: "ORIENTATION_UNSPECIFIED"
        case .portrait: "ORIENTATION_PORTRAIT"
        case .landscape: "ORIENTATION_LANDSCAPE"
        }
    }

    static func stats(
        _ pools: [PoolStats], sources: [DemandSourceStats], loaders: [LoaderState], instance: String,
        feeds: FeedStats = FeedStats(), poolStore: PoolStoreStats? = nil
    ) -> [String: Any] {
        var object: [String: Any] = [
            "pools": pools.map(pool), "sources": sources.map(source), "loaders": loaders.map(loader),
            "instance": instance,
        ]
        // A message field, set only when the server sent it (it omits all-zero feed counters).
        if feeds != FeedStats() { object["feeds"] = Self.feeds(feeds) }
        if let poolStore { object["poolStore"] = Self.poolStore(poolStore) }
        return object
    }

    static func poolStore(_ s: PoolStoreStats) -> [String: Any] {
        [
            "restoredFrom": s.restoredFrom, "restoredAds": uint64(s.restoredAds),
            "restoredLeases": uint64(s.restoredLeases), "expiredWhileDown": uint64(s.expiredWhileDown),
            "reclaimedLeases": uint64(s.reclaimedLeases), "droppedAds": uint64(s.droppedAds),
            "uncertainAds": uint64(s.uncertainAds), "downMs": int64(s.downMilliseconds),
            "restoreMs": int64(s.restoreMilliseconds), "journalBytes": uint64(s.journalBytes),
            "journalCommits": uint64(s.journalCommits), "journalCheckpoints": uint64(s.journalCheckpoints),
            "writeFailures": uint64(s.writeFailures),
        ]
    }

    static func feeds(_ f: FeedStats) -> [String: Any] {
        [
            "feedsHeld": uint64(UInt64(max(0, f.feedsHeld))), "positionsPlanned": uint64(f.positionsPlanned),
            "positionsFilled": uint64(f.positionsFilled), "comingAnswers": uint64(f.comingAnswers),
            "positionsEmpty": uint64(f.positionsEmpty), "separationHolds": uint64(f.separationHolds),
            "feedsExpired": uint64(f.feedsExpired), "feedsRefused": uint64(f.feedsRefused),
            "guaranteesLost": uint64(f.guaranteesLost),
        ]
    }

    static func pool(_ p: PoolStats) -> [String: Any] {
        [
            "loader": p.loader, "adUnitId": p.adUnitID, "consentClass": p.consentClass, "available": p.available,
            "leased": p.leased, "inFlight": p.inFlight,
            "parkedBorrows": p.parkedBorrows, "requestsInFlight": p.requestsInFlight, "target": p.target,
            "idle": p.idle,
            "loaded": uint64(p.loaded), "expired": uint64(p.expired), "consumed": uint64(p.consumed),
            "removed": uint64(p.removed), "upstreamRequests": uint64(p.upstreamRequests),
            "upstreamFailures": uint64(p.upstreamFailures), "borrowHits": uint64(p.borrowHits),
            "borrowMisses": uint64(p.borrowMisses), "leasesReclaimed": uint64(p.leasesReclaimed),
            "restoredAds": uint64(p.restoredAds), "restoredLeases": uint64(p.restoredLeases),
            "heldBackMs": uint64(p.heldBackMilliseconds), "expiredOnArrival": uint64(p.expiredOnArrival),
            "memoryRefused": uint64(p.budgetRefused), "memoryDropped": uint64(p.droppedForMemory),
            "inFlightTarget": p.inFlightTarget, "heldBack": p.heldBack?.name ?? "",
            "roundTripMs": p.roundTripMilliseconds, "adsPerRequest": p.adsPerRequest,
            "minimumRemainingLifeMs": int64(p.minimumRemainingLifeMilliseconds),
        ]
    }

    static func source(_ s: DemandSourceStats) -> [String: Any] {
        [
            "name": s.name, "requests": uint64(s.requests), "noFills": uint64(s.noFills),
            "bids": uint64(s.bids), "bidsDropped": uint64(s.bidsDropped), "failures": uint64(s.failures),
            "noticesSent": uint64(s.noticesSent), "noticesFailed": uint64(s.noticesFailed),
            "noticesDropped": uint64(s.noticesDropped), "noticesRetried": uint64(s.noticesRetried),
            "noticesRestored": uint64(s.noticesRestored), "noticesPending": uint64(s.noticesPending),
            "noticesUncertain": uint64(s.noticesUncertain),
        ]
    }

    static func loader(_ l: LoaderState) -> [String: Any] {
        [
            "name": l.name, "enabled": l.enabled, "source": l.source, "pools": l.pools,
            "blockedCreatives": l.blockedCreatives,
        ]
    }

    static func event(_ e: AdEvent) -> [String: Any] {
        [
            "kind": "EVENT_KIND_" + e.kind.wireName, "atUnixMs": int64(e.at.unixMilliseconds), "loader": e.loader,
            "adUnitId": e.adUnitID, "adId": e.adID ?? "", "leaseId": uint64(e.leaseID ?? 0), "slotKey": e.slot ?? "",
            "shown": e.shown, "count": e.count, "error": e.error?.description ?? "",
            "reason": e.kind == .restored ? e.restoration?.origin?.rawValue ?? "" : e.reason?.wireName ?? "",
            "note": e.note ?? "", "leases": e.restoration?.leases ?? 0, "expired": e.restoration?.expired ?? 0,
        ]
    }

    static func loaderSwitched(changed: Bool) -> [String: Any] { ["changed": changed] }

    static func reloaded(_ r: ReconfigureResult) -> [String: Any] {
        [
            "added": r.added, "removed": r.removed, "changedKeepingPools": r.changedKeepingPools,
            "changedDroppingPools": r.changedDroppingPools, "unchanged": r.unchanged,
        ]
    }

    static func appOpen(_ a: AppOpenResponseMessage) -> [String: Any] {
        let outcome =
            switch a.outcome {
            case .show: "APP_OPEN_OUTCOME_SHOW"
            case .skip: "APP_OPEN_OUTCOME_SKIP"
            case .noAdReady: "APP_OPEN_OUTCOME_NO_AD_READY"
            case .unknown: "APP_OPEN_OUTCOME_UNSPECIFIED"
            }
        var object: [String: Any] = [
            "outcome": outcome, "reason": "APP_OPEN_REASON_" + (a.reason.map(Output.name) ?? "UNSPECIFIED"),
            "firstLaunch": a.flags.firstLaunch, "coldStart": a.flags.coldStart,
            "thresholdReached": a.flags.thresholdReached,
            "sessionCapReached": a.flags.sessionCapReached, "dailyCapReached": a.flags.dailyCapReached,
            "fromUnlock": a.flags.fromUnlock, "storeUnavailable": a.storeUnavailable, "sessionCount": a.counts.session,
            "dailyCount": a.counts.day, "sessionReserved": a.reserved.session, "dailyReserved": a.reserved.day,
            "day": a.day,
        ]
        if let lease = a.lease { object["lease"] = self.lease(lease) }
        return object
    }
}
