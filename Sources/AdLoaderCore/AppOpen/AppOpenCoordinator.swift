/// App-open ads: decides, for an app start or a return to the foreground, whether to show an
/// app-open ad (the loader's ``AppOpenPolicy`` over the counts of a ``CapStore``), lends one
/// from the loader when it shows, and counts the show when its lease is returned shown.
///
/// A SHOW is counted at decision time: it is reserved against the session and daily caps
/// until its shown Return confirms it in the store (whose count then holds it), its lease
/// ends otherwise, or ``AppOpenPolicy/reservationTimeout`` passes. So two decisions in flight
/// for one device (both read the store before either show was confirmed) cannot both pass a
/// cap of 1. Reservations live in this process: replicas sharing a Redis store each hold
/// their own (see PROTOCOL.md 7.6).
///
/// The leases it lends are the loader's own leases, tagged (``AppOpenLeaseTag``): they end,
/// time out and are reclaimed like any other; the tag is how a Return finds the counts to move.
///
/// No I/O: the store answers through its completion, at once or later; every completion runs
/// on the loop (``CapStore``).
///
/// - Important: loop-confined: create it and call it on the loader's thread.
public final class AppOpenCoordinator {
    public let loader: NativeAdvertisementLoader
    /// App-open counts: read by a decision, moved by a shown Return of a tagged lease.
    public let capStore: any CapStore
    /// What a decision does when ``capStore`` fails.
    public let outageMode: CapStoreOutageMode
    private var reservations = AppOpenReservations()
    /// App-open leases open now (tagged leases of the loader).
    public private(set) var openLeaseCount = 0

    public init(
        loader: NativeAdvertisementLoader, capStore: any CapStore = InMemoryCapStore(),
        outageMode: CapStoreOutageMode = .refuse
    ) {
        self.loader = loader
        self.capStore = capStore
        self.outageMode = outageMode
    }

    /// SHOWs reserved now (decided, neither confirmed nor released), all devices together.
    public var reservedCount: Int { reservations.count }

    /// The reservations held now for `key`'s session and day.
    public func reserved(for key: CapKey) -> AppOpenCounts { reservations.counts(for: key) }

    /// Decides for `request` and, when the policy says show, lends an ad of ad unit
    /// `adUnitID` of loader `name` and reserves the show.
    ///
    /// Reads the device's counts from the store first; `completion` runs once, with the
    /// answer, when they arrive (before this returns when the store answers at once), unless
    /// `isWanted` (asked first, once) says the caller no longer waits: then nothing is decided,
    /// lent or reserved.
    /// - Throws: ``LoaderError`` `.invalidArgument` (empty `device_id`, `session_id` or
    ///   `ad_unit_id`, `utc_offset_seconds` out of range, unknown `loader`),
    ///   `.failedPrecondition` (a loader whose format is not appOpen); nothing is asked of
    ///   the store then. The completion's failures: `.unavailable` (loader disabled or shut
    ///   down), `.resourceExhausted` (a new ad unit beyond the loader's maximumPools).
    public func appOpen(
        _ request: AppOpenRequest, adUnitID: String, loader name: String, isWanted: @escaping () -> Bool,
        completion: @escaping (Result<AppOpenAnswer, LoaderError>) -> Void
    ) throws(LoaderError) {
        if request.deviceID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "device_id", message: "must not be empty")
        }
        if request.sessionID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "session_id", message: "must not be empty")
        }
        if adUnitID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "ad_unit_id", message: "must not be empty")
        }
        let maximumOffset = LocalDay.maximumOffsetSeconds
        if abs(request.utcOffsetSeconds) > maximumOffset {
            throw LoaderError(
                code: .invalidArgument, field: "utc_offset_seconds",
                message: "must be -\(maximumOffset)...\(maximumOffset), got \(request.utcOffsetSeconds)")
        }
        guard let configuration = loader.configuration(named: name) else {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"\(name)\"")
        }
        guard configuration.format == .appOpen else {
            throw LoaderError(
                code: .failedPrecondition,
                message:
                    "loader \"\(name)\" has format \(configuration.format); AppOpen needs a loader of format appOpen")
        }
        // Signals that allow no auction are refused before anything is counted or reserved.
        _ = try loader.consentClass(for: request.privacy, loader: name)
        let policy = configuration.appOpen
        let now = loader.now
        let key = CapKey(
            loader: name, deviceID: request.deviceID, sessionID: request.sessionID,
            day: LocalDay(at: now, utcOffsetSeconds: request.utcOffsetSeconds),
            utcOffsetSeconds: request.utcOffsetSeconds)
        capStore.counts(for: key, at: now, sessionTimeout: policy.sessionTimeout) { [weak self] result in
            guard let self, isWanted() else { return }
            completion(self.decide(request, adUnitID: adUnitID, policy: policy, key: key, counts: result))
        }
    }

    /// The decision once the counts are in: reserved shows are added, a SHOW lends and reserves.
    private func decide(
        _ request: AppOpenRequest, adUnitID: String, policy: AppOpenPolicy, key: CapKey,
        counts result: Result<AppOpenCounts, CapStoreError>
    ) -> Result<AppOpenAnswer, LoaderError> {
        let reserved = reservations.counts(for: key)
        var answer: AppOpenAnswer
        switch result {
        case .success(let counts):
            let decision = policy.decide(request, counts: counts, reserved: reserved, day: key.day)
            answer = AppOpenAnswer(outcome: decision.shows ? .show : .skip, decision: decision)
        case .failure(let error):
            var decision = policy.decide(request, counts: AppOpenCounts(), reserved: reserved, day: key.day)
            if outageMode == .refuse && decision.shows { decision.reason = .storeUnavailable }
            answer = AppOpenAnswer(outcome: decision.shows ? .show : .skip, decision: decision, storeError: error)
        }
        guard answer.outcome == .show else { return .success(answer) }
        let outcome: BorrowOutcome
        do throws(LoaderError) {
            outcome = try loader.borrow(
                adUnitID: adUnitID, loader: key.loader, slot: nil, wait: .zero, mayPark: false,
                privacy: request.privacy, whenServed: { _ in })
        } catch {
            return .failure(error)
        }
        guard case .answered(let borrowed) = consume outcome else {
            preconditionFailure("a borrow without a wait parked")
        }
        switch borrowed {
        case .leased(let lease, _):
            reserve(lease, key: key, policy: policy)
            answer.lease = lease
        case .noAdYet, .upstreamFailed:  // a borrow without a wait does not fail fast; both mean no ad now
            answer.outcome = .noAdReady
        case .unavailable:
            return .failure(LoaderError(code: .unavailable, message: "loader \"\(key.loader)\" disabled"))
        }
        return .success(answer)
    }

    /// Tags the SHOW's lease and reserves its show until it is confirmed, the lease ends, or
    /// the reservation timeout passes (whichever comes first).
    private func reserve(_ lease: Lease, key: CapKey, policy: AppOpenPolicy) {
        let tag = AppOpenLeaseTag(key: key, sessionTimeout: policy.sessionTimeout, coordinator: self)
        guard loader.tagAppOpenLease(lease.id, tag) else { return }
        openLeaseCount += 1
        reservations.add(key)
        let releaseAt = loader.now + policy.reservationTimeout
        if releaseAt < lease.expiresAt {
            tag.timer = loader.scheduler.schedule(at: releaseAt) { [weak self, weak tag] in
                guard let self, let tag else { return }
                tag.timer = nil
                self.release(tag)
            }
        }
    }

    private func release(_ tag: AppOpenLeaseTag) {
        guard tag.isReserved else { return }
        tag.isReserved = false
        tag.timer?.cancel()
        tag.timer = nil
        reservations.remove(tag.key)
    }

    /// The loader ended a tagged lease.
    func leaseEnded(_ tag: AppOpenLeaseTag) {
        openLeaseCount -= 1
        release(tag)
    }

    /// Whether a Return of `leaseID` must first count a show in the store: an open app-open
    /// lease returned shown. Any other Return ends its lease as usual.
    public func needsConfirmation(leaseID: UInt64, shown: Bool) -> Bool {
        shown && openLeaseCount > 0 && loader.appOpenTag(ofLease: leaseID) != nil
    }

    /// Counts the show of the open app-open lease `leaseID` in the store (durably: the
    /// completion runs once the store has it), releasing its reservation then. The lease stays
    /// open: the caller ends it on success (so that a retried Return cannot count it twice),
    /// and leaves it open on failure (the client may return it again once the store is back).
    /// - Throws: ``LoaderError`` `.notFound` (field `lease_id`) when `leaseID` names no open
    ///   app-open lease; `.unavailable` while a shown Return of it is already being counted.
    public func confirmShow(
        leaseID: UInt64, completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) throws(LoaderError) {
        guard let tag = loader.appOpenTag(ofLease: leaseID) else {
            throw LoaderError(code: .notFound, field: "lease_id", message: loader.notFoundMessage(leaseID))
        }
        if tag.isConfirming {
            throw LoaderError(
                code: .unavailable,
                message:
                    "lease \(leaseID): its show is being counted by an earlier Return; return it again if that one fails"
            )
        }
        tag.isConfirming = true
        let now = loader.now
        let key = CapKey(
            loader: tag.key.loader, deviceID: tag.key.deviceID, sessionID: tag.key.sessionID,
            day: LocalDay(at: now, utcOffsetSeconds: tag.key.utcOffsetSeconds),
            utcOffsetSeconds: tag.key.utcOffsetSeconds)
        capStore.confirmShow(for: key, at: now, sessionTimeout: tag.sessionTimeout) { [weak self, tag] result in
            tag.isConfirming = false
            if case .success = result { self?.release(tag) }
            completion(result)
        }
    }
}
