public import AdLoaderCore
public import AdLoaderHTTP
public import AdLoaderLogging

/// A ``DemandSource`` that loads ads of every format from an OpenRTB 2.6 exchange (Prebid
/// Server's `POST /openrtb2/auction`, say): one BidRequest per batch with one `imp` per wanted
/// ad (native, or full-screen banner, video or native for the full-screen formats), bids mapped
/// to ads, win/billing and loss notices fired as the loader reports shows and drops.
///
/// Failures map to the core's classes (``UpstreamError``): refused, unreachable and DNS
/// failures to `.unreachable` (the loader waits and probes); timeouts, 5xx and 429 to
/// `.retryable` (429 and 503 with their `Retry-After`); other 4xx, a wrong content type and a
/// malformed body to `.final`, logged with the exchange's message. A 204, `{}`, an empty
/// `seatbid` or an `nbr` is a no-fill: success with no ads.
///
/// - Important: loop-confined, like its loader.
public final class OpenRTBSource: DemandSource {
    public let configuration: Configuration
    private let client: any HTTPClient
    private let notices: NoticeSender
    private let clock: any AdClock
    private let logger: Logger
    private let builder: BidRequestBuilder
    private let idPrefix: String
    private var nextID: UInt64 = 0
    private var counters = OpenRTBStats()

    /// - Parameters:
    ///   - configuration: checked with ``Configuration/validate()``.
    ///   - client: sends the BidRequests (``CurlHTTPClient`` with the configuration's caps).
    ///   - noticeClient: fires notices; may be `client`.
    ///   - clock: reads "now" for `bid.exp`.
    ///   - scheduler: runs the notices' retries.
    ///   - noticeStore: keeps undelivered notices across restarts; nil: in memory only.
    ///   - name: the source's name, the key of its notices in `noticeStore`.
    ///   - logger: final failures and dropped bids are logged here.
    /// - Throws: ``ConfigError`` when the configuration does not validate.
    public init(
        configuration: Configuration, client: any HTTPClient, noticeClient: any HTTPClient, clock: any AdClock,
        scheduler: any AdScheduler, noticeStore: (any NoticeOutboxStore)? = nil, name: String = "openrtb",
        logger: Logger
    ) throws(ConfigError) {
        try configuration.validate()
        self.configuration = configuration
        self.client = client
        self.clock = clock
        self.logger = logger
        builder = BidRequestBuilder(configuration: configuration)
        notices = NoticeSender(
            client: noticeClient, queueLimit: configuration.noticeQueueLimit, timeout: configuration.noticeTimeout,
            policy: .init(retryInterval: configuration.noticeRetryInterval, attempts: configuration.noticeAttempts),
            clock: clock, scheduler: scheduler, store: noticeStore, sourceName: name)
        var generator = SystemRandomNumberGenerator()
        idPrefix = String(generator.next() & 0xFFFF_FFFF_FFFF, radix: 16)
    }

    /// The counters so far, notices included.
    public var stats: OpenRTBStats {
        var stats = counters
        stats.noticesSent = notices.sent
        stats.noticesFailed = notices.failed
        stats.noticesDropped = notices.dropped
        stats.noticesRetried = notices.retried
        stats.noticesRestored = notices.restored
        stats.noticesUncertain = notices.uncertain
        stats.noticesPending = UInt64(notices.pending)
        return stats
    }

    /// ``stats`` for the loader's Stats.
    public var statistics: DemandSourceStats? {
        let s = stats
        var result = DemandSourceStats()
        result.requests = s.requests
        result.noFills = s.noFills
        result.bids = s.bids
        result.bidsDropped = s.bidsDropped
        for code in LossReason.droppedBidCodes { result.bidsDroppedByReason[LossReason.metricLabel(for: code)] = 0 }
        for (code, count) in s.bidsDroppedByCode {
            result.bidsDroppedByReason[LossReason.metricLabel(for: code), default: 0] += count
        }
        result.failures = s.failures
        result.noticesSent = s.noticesSent
        result.noticesFailed = s.noticesFailed
        result.noticesDropped = s.noticesDropped
        result.noticesRetried = s.noticesRetried
        result.noticesRestored = s.noticesRestored
        result.noticesUncertain = s.noticesUncertain
        result.noticesPending = s.noticesPending
        return result
    }

    /// Stops firing notices (later ones are dropped and counted); undelivered ones stay in the
    /// notice store for the next start.
    public func close() { notices.close() }

    /// Sends the notices the previous run left undelivered in the notice store.
    /// - Returns: how many.
    @discardableResult
    public func restoreNotices() -> Int { notices.restore() }

    public func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        nextID += 1
        let auctionID = "\(idPrefix)-\(nextID)"
        let count = min(max(count, 1), 5)
        let body = builder.build(request, count: count, id: auctionID, transactionID: "\(idPrefix)-t\(nextID)")
        let http = HTTPRequest(
            method: .post, url: configuration.endpoint,
            headers: [
                HTTPHeader("Content-Type", "application/json"), HTTPHeader("Accept", "application/json"),
                HTTPHeader("x-openrtb-version", "2.6"),
            ],
            body: Array(body.utf8), timeout: configuration.timeout, connectTimeout: configuration.connectTimeout)
        counters.requests += 1
        let impressionIDs = Set(BidRequestBuilder.impressionIDs(count: count))
        let media = configuration.media(for: request.format)
        let floor = builder.floor(of: request)
        client.send(http) { [self] result in
            // Only requests the exchange could have received count as sent: not one that
            // failed while connecting (or before its first byte went out).
            if case .failure(let error) = result, !error.requestSent {
                counters.requests -= 1
                counters.unsent += 1
            }
            completion(
                answer(
                    result, auctionID: auctionID, impressionIDs: impressionIDs, media: media, floor: floor,
                    adUnitID: request.adUnitID, rewarded: request.format == .rewarded))
        }
    }

    public func adShown(_ ad: Ad) { adShown(ad, device: ImpressionDevice()) }

    /// Fires the billing notice (`burl`, else `nurl`) of a shown Return, once per ad: at its
    /// first impression, whatever the loader's show count threshold, with the device the
    /// Return named as headers (``NoticeSender/headers(for:)``). An unshown Return, a lease
    /// reclaimed or an ad dropped never bills.
    public func adShown(_ ad: Ad, device: ImpressionDevice) {
        guard ad.showCount == 1, let context = ad.sourceContext as? BidContext, !context.winURL.isEmpty else { return }
        notices.fire(context.macros.substitute(in: context.winURL), device: device)
    }

    public func adDropped(_ ad: Ad, reason: AdDropReason) {
        guard ad.showCount == 0, let context = ad.sourceContext as? BidContext, !context.lossURL.isEmpty else { return }
        var macros = context.macros
        macros.lossReason = LossReason.code(for: reason)
        notices.fire(macros.substitute(in: context.lossURL))
    }

    /// The loss notice of a bid dropped while its response was read (bad markup, a medium not
    /// asked for, outbid, ...), with the bid's macros and its ``BidResponseParser/DroppedBid/lossReason``.
    private func fireLoss(
        of dropped: BidResponseParser.DroppedBid, outcome: BidResponseParser.Outcome, auctionID: String
    ) {
        guard !dropped.lossURL.isEmpty else { return }
        let macros = NoticeMacros(
            auctionID: outcome.responseID.isEmpty ? auctionID : outcome.responseID, bidID: dropped.bidID,
            impressionID: dropped.impressionID, seatID: dropped.seat, adID: dropped.adID, price: dropped.price,
            currency: outcome.currency, lossReason: dropped.lossReason)
        notices.fire(macros.substitute(in: dropped.lossURL))
    }

    private func answer(
        _ result: Result<HTTPResponse, HTTPError>, auctionID: String, impressionIDs: Set<String>,
        media: [OpenRTBMedia], floor: BidResponseParser.Floor?, adUnitID: String, rewarded: Bool
    ) -> Result<[DeliveredAd], UpstreamError> {
        switch Self.classify(result, impressionIDs: impressionIDs, media: media, floor: floor) {
        case .failure(let error):
            counters.failures += 1
            if error.code == .final {
                logger.warning(
                    "openrtb request failed",
                    [
                        "endpoint": .string(configuration.endpoint), "adUnitID": .string(adUnitID),
                        "error": .string(error.message),
                    ])
            } else {
                logger.debug("openrtb request failed", ["error": .string(error.description)])
            }
            return .failure(error)
        case .success(let outcome):
            counters.bids += UInt64(outcome.bids.count)
            counters.bidsDropped += UInt64(outcome.dropped.count)
            if outcome.bids.isEmpty { counters.noFills += 1 }
            for dropped in outcome.dropped {
                counters.bidsDroppedByCode[dropped.lossReason, default: 0] += 1
                logger.info(
                    "openrtb bid dropped",
                    [
                        "adUnitID": .string(adUnitID), "bid": .string(dropped.bidID),
                        "reason": .string(dropped.reason), "lossReason": .string(String(dropped.lossReason)),
                    ])
                fireLoss(of: dropped, outcome: outcome, auctionID: auctionID)
            }
            let now = clock.now
            let reward =
                rewarded && !configuration.rewardType.isEmpty
                ? FullScreenCreative.Reward(type: configuration.rewardType, amount: configuration.rewardAmount) : nil
            return .success(
                outcome.bids.map { delivered($0, outcome: outcome, auctionID: auctionID, now: now, reward: reward) })
        }
    }

    /// What identifies a bid's creative when a client invalidates it: `seat/crid` (a `crid`
    /// is unique per bidder, not across seats), `crid` without a seat, nil without a `crid`
    /// (the loader then compares the creative itself).
    static func creativeKey(of bid: BidResponseParser.Bid) -> String? {
        guard !bid.creativeID.isEmpty else { return nil }
        return bid.seat.isEmpty ? bid.creativeID : "\(bid.seat)/\(bid.creativeID)"
    }

    private func delivered(
        _ bid: BidResponseParser.Bid, outcome: BidResponseParser.Outcome, auctionID: String, now: AdInstant,
        reward: FullScreenCreative.Reward?
    ) -> DeliveredAd {
        let macros = NoticeMacros(
            auctionID: outcome.responseID.isEmpty ? auctionID : outcome.responseID, bidID: bid.bidID,
            impressionID: bid.impressionID, seatID: bid.seat, adID: bid.adID, price: bid.price,
            currency: outcome.currency)
        // Native trackers get the bid's macros; banner and video markup goes to the client as sent.
        var creative = bid.creative
        if var content = creative.nativeContent {
            content.impressionTrackers = content.impressionTrackers.map(macros.substitute(in:))
            content.clickTrackers = content.clickTrackers.map(macros.substitute(in:))
            if content.advertiser.isEmpty, let domain = bid.advertiserDomains.first { content.advertiser = domain }
            creative = .native(content)
        } else if let reward, var fullScreen = creative.fullScreenCreative {
            // The placement's reward, configured: a bid names none.
            fullScreen.reward = reward
            creative = .fullScreen(fullScreen)
        }
        let context = BidContext(
            macros: macros, winURL: bid.billingURL.isEmpty ? bid.winURL : bid.billingURL, lossURL: bid.lossURL,
            creativeID: bid.creativeID, advertiserDomains: bid.advertiserDomains)
        return DeliveredAd(
            creative: creative, sourceExpiry: bid.expirySeconds.map { now + .seconds($0) }, context: context,
            creativeID: Self.creativeKey(of: bid), advertiserDomains: bid.advertiserDomains, categories: bid.categories)
    }
}
