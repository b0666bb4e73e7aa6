import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// Well-formed calls and bad field values: every method round trip and the statuses it answers.
extension ConformanceRun {
    static var callChecks: [Check] {
        [
            Check(name: "preface.answered") { try $0.prefaceAnswered() },
            Check(name: "stats.round-trip") { try $0.statsRoundTrip() },
            Check(name: "stats.filters-matching-nothing") { try $0.statsMatchingNothing() },
            Check(name: "prefetch.round-trip") { try $0.prefetchRoundTrip() },
            Check(name: "borrow-return.round-trip") { try $0.borrowReturnRoundTrip() },
            Check(name: "borrow.slot-affinity") { try $0.borrowSlotAffinity() },
            Check(name: "return.lease-survives-disconnect") { try $0.leaseSurvivesDisconnect() },
            Check(name: "borrow.no-ad-yet") { try $0.borrowNoAdYet() },
            Check(name: "return.unknown-lease-not-found") { try $0.returnUnknownLease() },
            Check(name: "invalid.empty-ad-unit-id") { try $0.emptyAdUnitID() },
            Check(name: "invalid.unknown-loader") { try $0.unknownLoader() },
            Check(name: "invalid.identifier-too-long") { try $0.identifierTooLong() },
            Check(name: "invalid.wait-above-maximum") { try $0.waitAboveMaximum() },
            Check(name: "invalid.lease-id-zero") { try $0.leaseIDZero() },
            Check(name: "invalid.watch-unknown-kind") { try $0.watchUnknownKind() },
            Check(name: "control.invalidate-needs-a-reason") { try $0.invalidateNeedsAReason() },
            Check(name: "control.set-loader-enabled-unknown-loader") { try $0.setLoaderEnabledUnknownLoader() },
            Check(name: "call.unknown-method-unimplemented") { try $0.unknownMethod() },
            Check(name: "call.undecodable-message") { try $0.undecodableMessage() },
            Check(name: "call.call-id-zero") { try $0.callIDZero() },
            Check(name: "call.duplicate-call-id") { try $0.duplicateCallID() },
        ]
    }

    func prefaceAnswered() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectRaw()
        defer { connection.close() }
        let started = ContinuousClock.now
        try connection.sendPreface()
        let answer = try connection.readRaw(ProtocolPreface.count)
        guard answer == ProtocolPreface.bytes else {
            throw CheckFailure("expected the 12-byte preface \(hex(ProtocolPreface.bytes)), got \(hex(answer))")
        }
        return .passed("server answered \"ADLOADER/1\\r\\n\" in \((ContinuousClock.now - started).milliseconds) ms")
    }

    func statsRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let all = try connection.call(MethodName.stats, Requests.stats(loader: "", adUnitID: ""))
        let everything = try decode(StatsResponseMessage.self, try all.okMessage("Stats (all)"), "Stats (all)")
        // A deadline that is not reached and metadata (read by no version 1 server) change nothing.
        let scoped = try connection.call(
            MethodName.stats, Requests.stats(loader: loader, adUnitID: ""), timeoutMilliseconds: 5_000,
            metadata: [MetadataEntry(key: "authorization", value: "Bearer conformance")])
        let pools = try decode(StatsResponseMessage.self, try scoped.okMessage("Stats (loader)"), "Stats (loader)")
            .pools
        if let stray = pools.first(where: { $0.loader != loader }) {
            throw CheckFailure("Stats for loader \"\(loader)\" listed a pool of loader \"\(stray.loader)\"")
        }
        return .passed("\(everything.pools.count) pools in all, \(pools.count) for \"\(loader)\"")
    }

    func statsMatchingNothing() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        // Filters that match nothing give an empty list, not an error (PROTOCOL.md 7.4).
        for (filterLoader, adUnit) in [(loader, freshAdUnit("never-used")), ("conformance-no-such-loader", "")] {
            let what = "Stats for loader \"\(filterLoader)\", ad unit \"\(adUnit)\" (matching nothing)"
            let none = try connection.call(MethodName.stats, Requests.stats(loader: filterLoader, adUnitID: adUnit))
            let found = try decode(StatsResponseMessage.self, try none.okMessage(what), what).pools
            guard found.isEmpty else { throw CheckFailure("\(what) listed \(found.count) pools") }
        }
        return .passed("a never-used ad unit and an unknown loader: OK, no pools")
    }

    func prefetchRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let adUnit = freshAdUnit("prefetch")
        let result = try connection.call(MethodName.prefetch, Requests.prefetch(adUnit, loader: loader))
        let first = try decode(PrefetchResponseMessage.self, try result.okMessage("Prefetch"), "Prefetch").result
        guard first.requested > 0 || first.inFlight > 0 || first.available > 0 else {
            throw CheckFailure("Prefetch of an empty pool requested nothing: \(first)")
        }
        // A second prefetch right away finds enough loaded or coming: it asks for nothing more.
        let again = try connection.call(MethodName.prefetch, Requests.prefetch(adUnit, loader: loader))
        let second = try decode(PrefetchResponseMessage.self, try again.okMessage("second Prefetch"), "Prefetch")
            .result
        guard second.requested == 0 else {
            throw CheckFailure("a second Prefetch requested \(second.requested) more ads (\(first) then \(second))")
        }
        return .passed(
            "requested \(first.requested), in flight \(first.inFlight); again: available \(second.available), "
                + "in flight \(second.inFlight), requested 0")
    }

    func borrowReturnRoundTrip() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let adUnit = freshAdUnit("borrow")
        let wait = UInt32(min(timeout.milliseconds * 3 / 4, limitsWaitMilliseconds))
        let borrowed = try lease(
            of: try connection.call(MethodName.borrow, Requests.borrow(adUnit, loader: loader, waitMilliseconds: wait)),
            .leased, "Borrow with wait_ms \(wait) on an empty pool")
        let ad = borrowed.ad
        guard ad.adUnitID == adUnit else {
            throw CheckFailure("the lent ad belongs to ad unit \"\(ad.adUnitID)\", not \"\(adUnit)\"")
        }
        let headline = ad.creative.nativeContent?.headline ?? ""
        guard !ad.id.isEmpty, !headline.isEmpty else {
            throw CheckFailure("the lent ad has an empty id or headline: \(ad)")
        }
        guard ad.expiresAt > ad.loadedAt else { throw CheckFailure("the lent ad expires before it loaded: \(ad)") }
        let returned = try connection.call(MethodName.returnLease, Requests.returnLease(borrowed.id, shown: false))
        let outcome = try decode(ReturnResponseMessage.self, try returned.okMessage("Return"), "Return").outcome
        guard outcome == .backInPool else {
            throw CheckFailure("Return unshown: expected BACK_IN_POOL, got \(String(describing: outcome))")
        }
        try connection.call(MethodName.returnLease, Requests.returnLease(borrowed.id))
            .expect(.notFound, naming: "lease_id", "a second Return of the same lease")
        let stats = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: adUnit))
        let pools = try decode(StatsResponseMessage.self, try stats.okMessage("Stats"), "Stats").pools
        guard pools.count == 1, let pool = pools.first, pool.adUnitID == adUnit, pool.loader == loader else {
            throw CheckFailure("Stats for the ad unit listed \(pools.count) pools, expected exactly its own")
        }
        guard pool.leased == 0, pool.loaded >= 1, pool.available >= 1 else {
            throw CheckFailure("after returning the only lease, Stats shows \(pool)")
        }
        return .passed(
            "lease \(borrowed.id) of ad \(ad.id) (\"\(headline)\"), back in pool; returned twice: NOT_FOUND")
    }

    func borrowSlotAffinity() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let adUnit = freshAdUnit("slot")
        let wait = UInt32(min(timeout.milliseconds * 3 / 4, limitsWaitMilliseconds))
        let slot = "conformance-feed/position-7"
        let first = try lease(
            of: try connection.call(
                MethodName.borrow, Requests.borrow(adUnit, loader: loader, slot: slot, waitMilliseconds: wait)),
            .leased, "first Borrow for the slot")
        guard first.slot == slot else {
            throw CheckFailure("the lease names slot \(String(describing: first.slot)), not \"\(slot)\"")
        }
        let again = try lease(
            of: try connection.call(MethodName.borrow, Requests.borrow(adUnit, loader: loader, slot: slot)),
            .reused, "second Borrow for the same slot")
        guard again.id == first.id, again.ad.id == first.ad.id else {
            throw CheckFailure(
                "the same slot got lease \(again.id) (ad \(again.ad.id)), not \(first.id) (ad \(first.ad.id))")
        }
        let other = try lease(
            of: try connection.call(
                MethodName.borrow,
                Requests.borrow(adUnit, loader: loader, slot: slot + "-other", waitMilliseconds: wait)),
            .leased, "Borrow for another slot")
        guard other.id != first.id, other.ad.id != first.ad.id else {
            throw CheckFailure("another slot got the same lease or ad as the first slot")
        }
        for id in [first.id, other.id] {
            _ = try connection.call(MethodName.returnLease, Requests.returnLease(id)).okMessage("Return")
        }
        // After the return the slot holds nothing: the next borrow is a new lease.
        let fresh = try lease(
            of: try connection.call(
                MethodName.borrow, Requests.borrow(adUnit, loader: loader, slot: slot, waitMilliseconds: wait)),
            .leased, "Borrow for the slot after its lease was returned")
        _ = try connection.call(MethodName.returnLease, Requests.returnLease(fresh.id)).okMessage("Return")
        return .passed("slot kept lease \(first.id) (REUSED); another slot got \(other.id); after return, \(fresh.id)")
    }

    func borrowNoAdYet() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let result = try connection.call(MethodName.borrow, Requests.borrow(freshAdUnit("no-ad-yet"), loader: loader))
        let response = try decode(BorrowResponseMessage.self, try result.okMessage("Borrow"), "Borrow")
        guard response.outcome == .noAdYet, response.lease == nil else {
            throw CheckFailure(
                "Borrow with wait_ms 0 on a never-used ad unit: expected OK NO_AD_YET without a lease, got "
                    + "\(response.outcome)\(response.lease.map { " with lease \($0.id)" } ?? "")")
        }
        return .passed("OK, NO_AD_YET at once")
    }

    func leaseSurvivesDisconnect() throws(CheckFailure) -> CheckOutcome {
        let adUnit = freshAdUnit("disconnect")
        let wait = UInt32(min(timeout.milliseconds * 3 / 4, limitsWaitMilliseconds))
        let first = try connect()
        let lent = try lease(
            of: try first.call(MethodName.borrow, Requests.borrow(adUnit, loader: loader, waitMilliseconds: wait)),
            .leased, "Borrow")
        first.close()
        // PROTOCOL.md 5.5: a lease id stays valid across connections.
        let second = try connect()
        defer { second.close() }
        let outcome = try decode(
            ReturnResponseMessage.self,
            try second.call(MethodName.returnLease, Requests.returnLease(lent.id, shown: true))
                .okMessage("Return on another connection"), "Return"
        ).outcome
        guard outcome == .consumed || outcome == .backInPool else {
            throw CheckFailure(
                "Return shown: expected CONSUMED (or BACK_IN_POOL below the show count), got "
                    + String(describing: outcome))
        }
        return .passed("lease \(lent.id) returned shown on a new connection: \(outcome.map { "\($0)" } ?? "nil")")
    }

    func returnUnknownLease() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let unknown: UInt64 = 0xFFFF_FFFF_FFFF_FF00 | UInt64.random(in: 0...0xFF)
        let status = try connection.call(MethodName.returnLease, Requests.returnLease(unknown))
            .expect(.notFound, naming: "lease_id", "Return of a lease never lent")
        return .passed("\(status)")
    }

    func emptyAdUnitID() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let borrow = try connection.call(MethodName.borrow, Requests.borrow("", loader: loader))
            .expect(.invalidArgument, naming: "ad_unit_id", "Borrow with an empty ad_unit_id")
        try connection.call(MethodName.prefetch, Requests.prefetch("", loader: loader))
            .expect(.invalidArgument, naming: "ad_unit_id", "Prefetch with an empty ad_unit_id")
        return .passed("\(borrow)")
    }

    func unknownLoader() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let name = "conformance-no-such-loader"
        let borrow = try connection.call(MethodName.borrow, Requests.borrow(freshAdUnit("loader"), loader: name))
            .expect(.invalidArgument, naming: "loader", "Borrow with an unknown loader")
        try connection.call(MethodName.prefetch, Requests.prefetch(freshAdUnit("loader"), loader: name))
            .expect(.invalidArgument, naming: "loader", "Prefetch with an unknown loader")
        return .passed("\(borrow)")
    }

    /// PROTOCOL.md 8: an identifier one byte over the limit is INVALID_ARGUMENT naming its field
    /// and creates no pool; one at the limit is served.
    func identifierTooLong() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let limit = options.limits.maximumIdentifierLength
        func padded(_ label: String, to length: Int) -> String {
            let base = freshAdUnit(label)
            return base + String(repeating: "x", count: max(0, length - base.utf8.count))
        }
        let tooLong = padded("long", to: limit + 1)
        let status = try connection.call(MethodName.borrow, Requests.borrow(tooLong, loader: loader))
            .expect(.invalidArgument, naming: "ad_unit_id", "Borrow with a \(limit + 1)-byte ad_unit_id")
        try connection.call(MethodName.prefetch, Requests.prefetch(tooLong, loader: loader))
            .expect(.invalidArgument, naming: "ad_unit_id", "Prefetch with a \(limit + 1)-byte ad_unit_id")
        try connection.call(
            MethodName.borrow,
            Requests.borrow(freshAdUnit("slot"), loader: loader, slot: String(repeating: "s", count: limit + 1))
        ).expect(.invalidArgument, naming: "slot_key", "Borrow with a \(limit + 1)-byte slot_key")
        try connection.call(
            MethodName.prefetch,
            Requests.prefetch(freshAdUnit("loader"), loader: String(repeating: "l", count: limit + 1))
        ).expect(.invalidArgument, naming: "loader", "Prefetch with a \(limit + 1)-byte loader")
        let pools = try decode(
            StatsResponseMessage.self,
            try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: "")).okMessage("Stats"),
            "Stats"
        ).pools
        if pools.contains(where: { $0.adUnitID.utf8.count > limit }) {
            throw CheckFailure("a refused identifier created a pool")
        }
        let atLimit = padded("edge", to: limit)
        _ = try connection.call(MethodName.prefetch, Requests.prefetch(atLimit, loader: loader)).okMessage(
            "Prefetch with a \(limit)-byte ad_unit_id")
        return .passed("\(status); \(limit) bytes served")
    }

    var limitsWaitMilliseconds: Int64 { options.limits.maximumBorrowWait.milliseconds }

    func waitAboveMaximum() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let above = UInt32(clamping: limitsWaitMilliseconds + 1)
        let status = try connection.call(
            MethodName.borrow, Requests.borrow(freshAdUnit("wait"), loader: loader, waitMilliseconds: above)
        ).expect(.invalidArgument, naming: "wait_ms", "Borrow with wait_ms \(above) (maximum + 1)")
        return .passed("\(status)")
    }

    func leaseIDZero() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let status = try connection.call(MethodName.returnLease, Requests.returnLease(0, shown: true))
            .expect(.invalidArgument, naming: "lease_id", "Return of lease 0")
        return .passed("\(status)")
    }

    /// PROTOCOL.md 7.3: a Return with invalidate and no reason (or a reason without
    /// invalidate) is INVALID_ARGUMENT naming invalidate_reason, before the lease is looked up.
    /// Changes nothing on the server (the lease was never lent).
    func invalidateNeedsAReason() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let unknown: UInt64 = 0xFFFF_FFFF_FFFF_FE00 | UInt64.random(in: 0...0xFF)
        let status = try connection.call(MethodName.returnLease, Requests.invalidatingReturn(unknown, reason: ""))
            .expect(.invalidArgument, naming: "invalidate_reason", "Return with invalidate and no reason")
        let reasonOnly = ReturnRequestMessage(leaseID: unknown, shown: false, invalidateReason: "why").encoded()
        try connection.call(MethodName.returnLease, reasonOnly)
            .expect(.invalidArgument, naming: "invalidate_reason", "Return with a reason and no invalidate")
        try connection.call(MethodName.returnLease, Requests.invalidatingReturn(unknown, reason: "conformance"))
            .expect(.notFound, naming: "lease_id", "Return with invalidate of a lease never lent")
        return .passed("\(status)")
    }

    /// PROTOCOL.md 7.7: SetLoaderEnabled of an unknown loader is INVALID_ARGUMENT naming loader
    /// (no loader changes: the check is safe against a production server).
    func setLoaderEnabledUnknownLoader() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        let status = try connection.call(
            MethodName.setLoaderEnabled, Requests.setLoaderEnabled("conformance-no-such-loader", enabled: false)
        ).expect(.invalidArgument, naming: "loader", "SetLoaderEnabled of an unknown loader")
        try connection.call(MethodName.setLoaderEnabled, Requests.setLoaderEnabled("", enabled: true))
            .expect(.invalidArgument, naming: "loader", "SetLoaderEnabled without a loader")
        return .passed("\(status)")
    }

    func watchUnknownKind() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        var statuses: [String] = []
        // WatchRequest field 3 (kinds, packed): EVENT_KIND_UNSPECIFIED (0), then an unknown 127.
        for kinds: [UInt8] in [[0x1A, 0x01, 0x00], [0x1A, 0x01, 0x7F]] {
            let status = try connection.call(MethodName.watch, kinds)
                .expect(.invalidArgument, naming: "kinds", "Watch with kinds \(hex(kinds))")
            statuses.append("\(status)")
        }
        return .passed(statuses.joined(separator: " | "))
    }

    func callIDZero() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        var statuses: [String] = []
        var zeroLength: [UInt8] = []
        FrameEncoder.append([UInt8](), to: &zeroLength)  // a valid empty envelope: call_id 0
        var explicit: [UInt8] = []
        RequestFrame(callID: 0, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: ""))
            .appendFrame(to: &explicit)
        for (what, bytes) in [("an empty envelope", zeroLength), ("a Stats with call_id 0", explicit)] {
            try connection.send(bytes)
            let status = try connection.awaitEnd(of: 0).expect(.invalidArgument, naming: "call_id", what)
            statuses.append("\(status)")
        }
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats on the same connection afterwards")
        return .passed(statuses[0] + "; the connection stays open")
    }

    func unknownMethod() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        var statuses: [String] = []
        // An HTTP/2 :path must start with "/" (the server's HTTP/2 layer refuses the stream
        // otherwise), so over gRPC only the well-formed paths are asked.
        let methods = ["/adloader.v1.NativeAdLoader/NoSuchMethod", "/other.Service/Borrow", "Borrow", ""]
        for method in methods where !(connection is GRPCCallConnection) || method.hasPrefix("/") {
            let status = try connection.call(method, Requests.stats(loader: loader, adUnitID: ""))
                .expect(.unimplemented, "method \"\(method)\"")
            statuses.append("\(status)")
        }
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats on the same connection afterwards")
        return .passed(statuses[0] + "; the connection stays usable")
    }

    func undecodableMessage() throws(CheckFailure) -> CheckOutcome {
        let connection = try connectCalls()
        defer { connection.close() }
        // Field 1 (length-delimited) claims 16 bytes but only one follows: protobuf cannot decode it.
        let truncated: [UInt8] = [0x0A, 0x10, 0x61]
        let status = try connection.call(MethodName.borrow, truncated)
            .expect(.invalidArgument, naming: "BorrowRequest", "Borrow whose message is truncated protobuf")
        // A wire type that does not exist (7).
        try connection.call(MethodName.stats, [0x0F, 0x00]).expect(.invalidArgument, "Stats with wire type 7")
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats on the same connection afterwards")
        return .passed("\(status); the connection stays usable")
    }

    func duplicateCallID() throws(CheckFailure) -> CheckOutcome {
        let connection = try connect()
        defer { connection.close() }
        // A Watch stays in flight until cancelled, so the id is certainly in use.
        let id = connection.makeCallID()
        try connection.send([
            RequestFrame(
                callID: id, method: MethodName.watch,
                message: Requests.watch(loader: loader, adUnitID: freshAdUnit("duplicate")))
        ])
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats while the Watch runs")
        if connection.stashedCallIDs.contains(id) { throw CheckFailure("the Watch answered before the duplicate") }
        try connection.send([
            RequestFrame(callID: id, method: MethodName.stats, message: Requests.stats(loader: loader, adUnitID: ""))
        ])
        // PROTOCOL.md 5.1: both calls end, with one ALREADY_EXISTS frame for the id.
        let status = try connection.awaitEnd(of: id).expect(.alreadyExists, naming: "call_id", "a duplicate call id")
        // The Watch was dropped: a cancel is ignored and nothing more comes for the id.
        try connection.send([RequestFrame.cancel(callID: id)])
        _ = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            .okMessage("Stats with a new id afterwards")
        if let stray = connection.takeStashed(for: id).first {
            throw CheckFailure(
                "after \(status), another frame for call \(id) arrived (\(stray.end ? "end, \(stray.status)" : "a message")): "
                    + "the call already in flight must be dropped silently (PROTOCOL.md 5.1)")
        }
        // The id may be reused once its end was sent.
        _ = try connection.awaitEndOfNewCall(
            id: id, MethodName.stats, Requests.stats(loader: loader, adUnitID: "")
        ).okMessage("Stats reusing the ended id")
        return .passed("\(status); both ended, the id is reusable")
    }
}
