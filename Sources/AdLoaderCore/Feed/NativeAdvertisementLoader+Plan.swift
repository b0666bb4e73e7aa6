extension NativeAdvertisementLoader {
    /// Plans a window of a feed: which of its positions carry an ad and, for each, the lease
    /// of its ad or "coming".
    ///
    /// The loader keeps each feed's answers (``FeedState``) until the feed has had no call for
    /// ``LoaderConfiguration/feedIdleTimeout``:
    /// - A position answered with an ad keeps it: every later call answers the same lease (the
    ///   lease of slot `FEED#POSITION`, renewed by each call that plans the position), so a
    ///   scroll back shows the same ad. Only a position not rendered yet whose ad was lost
    ///   meanwhile (it expired or was dropped) is planned again (``FeedStats/guaranteesLost``).
    /// - A visible position without an ad is rendered so and stays empty: no ad pops in later.
    /// - A position ahead without an ad is "coming": a later call fills it if an ad can be lent.
    /// - An ad is placed only within the feed's ``SeparationRules``, never twice in the feed;
    ///   when the only available ads would break a rule the position stays coming (or empty)
    ///   and the pool is asked for more (``FeedStats/separationHolds``).
    ///
    /// Each ad position planned for the first time counts as one borrow of the pool's demand;
    /// the pool is topped up after the call as after a borrow. When the feed is forgotten,
    /// the leases of positions never rendered go back to the pool; rendered ones end as any
    /// lease (a Return, or the lease timeout).
    /// - Throws: ``LoaderError`` `.invalidArgument` for an empty feed id (`feed_id`), a bad
    ///   window (`visible`, `ahead`), placement rules out of the loader's bounds or unlike the
    ///   feed's (`placement`), signals that map to another consent class than the feed's first
    ///   call did (`privacy`), and as ``borrow(adUnitID:loader:slot:wait:mayPark:whenServed:)``
    ///   for the ad unit, loader and privacy signals; `.unavailable` for a disabled loader or after shutdown;
    ///   `.resourceExhausted` for a new feed when the loader holds ``LoaderConfiguration/maximumFeeds``.
    public func plan(_ request: PlanRequest) throws(LoaderError) -> FeedPlan {
        if request.feedID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "feed_id", message: "must not be empty")
        }
        let visible = request.visible
        if visible.lowerBound < 0 || visible.upperBound > PlanRequest.maximumPosition {
            throw LoaderError(
                code: .invalidArgument, field: "visible",
                message:
                    "positions must be 0...\(PlanRequest.maximumPosition), got \(visible.lowerBound)-\(visible.upperBound)"
            )
        }
        if request.ahead < 0 || visible.count + request.ahead > PlanRequest.maximumWindow {
            throw LoaderError(
                code: .invalidArgument, field: request.ahead < 0 ? "ahead" : "visible",
                message:
                    "visible positions plus ahead must be 1...\(PlanRequest.maximumWindow), got \(visible.count) + \(request.ahead)"
            )
        }
        let entry = try validated(adUnitID: request.adUnitID, loader: request.loader)
        let configuration = entry.configuration
        if let placement = request.placement {
            do throws(ConfigError) {
                try placement.validate(prefix: "placement")
            } catch {
                throw LoaderError(code: .invalidArgument, field: error.field, message: error.message)
            }
            if placement.maximumAdsPerFeed > configuration.placement.maximumAdsPerFeed {
                throw LoaderError(
                    code: .invalidArgument, field: "placement.maximumAdsPerFeed",
                    message:
                        "must be at most the loader's \(configuration.placement.maximumAdsPerFeed), got \(placement.maximumAdsPerFeed)"
                )
            }
        }
        try requireEnabled(entry)
        // The feed's ads come from the consent class of its signals, as a borrow's would.
        let consentClass = try self.consentClass(of: request.privacy, in: entry)
        forgetIdleFeeds()
        let key = FeedKey(loader: configuration.name, adUnitID: request.adUnitID, feedID: request.feedID)
        let existing = feedTable.feeds[key]
        if let existing, existing.consentClass != consentClass {
            throw LoaderError(
                code: .invalidArgument, field: "privacy",
                message:
                    "feed \"\(request.feedID)\" is planned for consent class \"\(existing.consentClass)\", these signals map to \"\(consentClass)\" (a feed's class is taken at its first call: a new feed id when the signals change)"
            )
        }
        let pool = try pool(for: entry, key: PoolKey(adUnitID: request.adUnitID, consentClass: consentClass))
        let nowMilliseconds = now.unixMilliseconds

        let feed: FeedState
        var created = false
        if let existing {
            if let placement = request.placement, placement != existing.placement {
                throw LoaderError(
                    code: .invalidArgument, field: "placement",
                    message:
                        "feed \"\(request.feedID)\" is planned with other placement rules (they are taken at its first call)"
                )
            }
            feed = existing
        } else {
            let held = feedTable.counts[key.loader, default: 0]
            if held >= configuration.maximumFeeds {
                feedTable.stats.feedsRefused += 1
                throw LoaderError(
                    code: .resourceExhausted,
                    message:
                        "loader \"\(key.loader)\" holds \(held) feeds (loaders.\(key.loader).feeds.maximum); a feed is forgotten after \(configuration.feedIdleTimeout.milliseconds / 1000) s without a Plan call"
                )
            }
            feed = FeedState(
                key: key, placement: request.placement ?? configuration.placement, separation: configuration.separation,
                consentClass: consentClass, now: nowMilliseconds)
            feedTable.feeds[key] = feed
            feedTable.counts[key.loader, default: 0] += 1
            created = true
        }
        feedTable.touch(feed, now: nowMilliseconds, idleTimeout: configuration.feedIdleTimeout.milliseconds)
        pool.demandArrived(at: nowMilliseconds)
        purgeExpired(pool)

        let range = visible.lowerBound..<(visible.upperBound + 1 + request.ahead)
        renewUnrendered(feed, outside: range, in: pool)
        var positions: [PlannedPosition] = []
        var holds = 0
        for position in feed.placement.adPositions(in: range) {
            let isVisible = visible.contains(position)
            switch feed.answers[position] {
            case .filled(var filled)?:
                if let lease = keep(&filled, in: pool) {
                    if isVisible {
                        filled.rendered = true
                        feed.unrendered.remove(position)
                    }
                    feed.answers[position] = .filled(filled)
                    positions.append(PlannedPosition(position: position, state: .ad(lease)))
                    continue
                }
                if filled.rendered {
                    // Rendered, its lease since ended (returned shown, reclaimed): the same ad.
                    positions.append(
                        PlannedPosition(
                            position: position,
                            state: .ad(
                                Lease(
                                    id: filled.leaseID, slot: filled.slot, expiresAt: filled.leaseExpiresAt,
                                    ad: filled.ad))))
                    continue
                }
                // Never rendered and its ad lost (expired, dropped): plan the position again.
                feedTable.stats.guaranteesLost += 1
                feed.unrendered.remove(position)
                feed.adIDs.remove(filled.ad.id)
                feed.creatives.remove(CreativeKey(filled.ad))
                feed.answers[position] = .coming
            case .empty?:
                positions.append(PlannedPosition(position: position, state: .empty))
                continue
            case .coming?:
                break
            case nil:
                feedTable.stats.positionsPlanned += 1
                pool.positionPlanned(at: nowMilliseconds)
            }
            let slot = feed.slot(for: position)
            switch lend(from: pool, slot: slot, where: { feed.allows($0, at: position, creative: $1) }) {
            case .lent(let lease):
                feed.answers[position] = .filled(
                    FeedState.FilledPosition(
                        ad: lease.ad, leaseID: lease.id, slot: slot, leaseExpiresAt: lease.expiresAt,
                        rendered: isVisible))
                feed.adIDs.insert(lease.ad.id)
                feed.creatives.insert(CreativeKey(lease.ad))
                if !isVisible { feed.unrendered.insert(position) }
                feedTable.stats.positionsFilled += 1
                pool.freshLeaseLent(at: nowMilliseconds, countsBorrow: false)
                positions.append(PlannedPosition(position: position, state: .ad(lease)))
                continue
            case .held:
                holds += 1
                feedTable.stats.separationHolds += 1
            case .none:
                break
            }
            if isVisible {
                feed.answers[position] = .empty
                feedTable.stats.positionsEmpty += 1
                pool.positionMissed()
                positions.append(PlannedPosition(position: position, state: .empty))
            } else {
                feed.answers[position] = .coming
                feedTable.stats.comingAnswers += 1
                positions.append(PlannedPosition(position: position, state: .coming))
            }
        }
        if holds > 0 {
            // Only ads the rules exclude are available: ask for more beyond them.
            pool.wantsAtLeast(pool.available.count + holds, maximum: configuration.maximumRetainedAdvertisements)
        }
        topUp(pool, trigger: .explicit)
        scheduleFeedTimer()
        return FeedPlan(positions: positions, created: created)
    }

    /// Feed-plan counters, with the feeds held now.
    public var feedStats: FeedStats {
        var stats = feedTable.stats
        stats.feedsHeld = feedTable.feeds.count
        return stats
    }

    /// The lease of a filled position if it is still open, renewed (its timeout moves to
    /// `leaseTimeout` from now, bounded by the ad's expiry).
    private func keep(_ filled: inout FeedState.FilledPosition, in pool: AdPool) -> Lease? {
        guard let handle = leases.handle(forID: filled.leaseID, ids: ids) else { return nil }
        let record = leases[handle]
        guard record.pool === pool, pool[record.adHandle].ad.id == filled.ad.id else { return nil }
        let expiresAt = leaseExpiry(of: filled.ad, in: pool)
        if expiresAt > record.expiresAt {
            leases.renew(handle, expiresAt: expiresAt)
            scheduleLeaseTimer()
        }
        filled.leaseExpiresAt = max(expiresAt, record.expiresAt)
        return Lease(id: filled.leaseID, slot: filled.slot, expiresAt: filled.leaseExpiresAt, ad: filled.ad)
    }

    /// Renews the leases of the feed's filled positions not rendered yet outside `range` (those
    /// inside are renewed as they are answered).
    private func renewUnrendered(_ feed: FeedState, outside range: Range<Int>, in pool: AdPool) {
        for position in feed.unrendered where !range.contains(position) {
            guard case .filled(var filled)? = feed.answers[position] else { continue }
            if keep(&filled, in: pool) != nil { feed.answers[position] = .filled(filled) }
        }
    }

    /// Forgets the feeds idle now, returning the leases of their positions never rendered.
    func forgetIdleFeeds() {
        let idle = feedTable.removeIdle(at: now.unixMilliseconds)
        feedTable.stats.feedsExpired += UInt64(idle.count)
        for feed in idle { release(feed) }
    }

    /// Returns, unshown, the open leases of a forgotten feed's positions that were never rendered.
    private func release(_ feed: FeedState) {
        for answer in feed.answers.values {
            guard case .filled(let filled) = answer, !filled.rendered,
                let handle = leases.handle(forID: filled.leaseID, ids: ids)
            else { continue }
            endLease(handle, .returned(shown: false))
        }
    }

    /// Keeps one scheduler wakeup at the earliest idle deadline of a feed.
    private func scheduleFeedTimer() {
        guard !isShutDown, let deadline = feedTable.nextDeadline else { return }
        if let current = feedTable.timerDeadline, current <= deadline, feedTable.timer != nil { return }
        feedTable.timer?.cancel()
        feedTable.timerDeadline = deadline
        feedTable.timer = scheduler.schedule(at: AdInstant(unixMilliseconds: deadline)) { [weak self] in
            guard let self else { return }
            self.feedTable.timer = nil
            self.feedTable.timerDeadline = nil
            self.forgetIdleFeeds()
            self.scheduleFeedTimer()
        }
    }
}
