import AdLoaderCore
import AdLoaderWire

// AppOpen: the loader's app-open policy over the counts in the cap store, a lease from the
// loader's pool when it says show; and the Return of such a lease, which moves the counts
// (durably, before the Return is answered) when the ad was shown.

extension AdLoaderService {
    /// - Returns: an open call when the store answers later (the answer follows then).
    func appOpen(
        _ message: AppOpenRequestMessage, callID: UInt64, timeout: Duration?, responder: any CallResponder
    ) throws -> OpenCall? {
        let request = message.request
        try checkIdentifier("device_id", request.deviceID)
        try checkIdentifier("session_id", request.sessionID)
        try checkIdentifier("ad_unit_id", message.adUnitID)
        try checkIdentifier("loader", message.loader)
        if let event = message.invalidEvent {
            throw LoaderError(
                code: .invalidArgument, field: "event", message: "must be LAUNCH (1) or FOREGROUND (2), got \(event)")
        }
        if request.deviceID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "device_id", message: "must not be empty")
        }
        if request.sessionID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "session_id", message: "must not be empty")
        }
        if message.adUnitID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "ad_unit_id", message: "must not be empty")
        }
        let maximumOffset = LocalDay.maximumOffsetSeconds
        if abs(request.utcOffsetSeconds) > maximumOffset {
            throw LoaderError(
                code: .invalidArgument, field: "utc_offset_seconds",
                message: "must be -\(maximumOffset)...\(maximumOffset), got \(request.utcOffsetSeconds)")
        }
        let loaderName = loaderName(message.loader)
        guard let configuration = loader.configuration(named: loaderName) else {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"\(loaderName)\"")
        }
        guard configuration.format == .appOpen else {
            throw Status(
                code: .failedPrecondition,
                message: "loader \"\(loaderName)\" has format \(configuration.format); AppOpen needs a loader of format appOpen")
        }
        let policy = configuration.appOpen
        let now = clock.now
        let day = LocalDay(at: now, utcOffsetSeconds: request.utcOffsetSeconds)
        let key = CapKey(
            loader: loaderName, deviceID: request.deviceID, sessionID: request.sessionID, day: day,
            utcOffsetSeconds: request.utcOffsetSeconds)
        let waiting = StoreWait()
        capStore.counts(for: key, at: now, sessionTimeout: policy.sessionTimeout) { [weak self] result in
            guard let self, waiting.complete(self) else { return }
            do {
                try self.decideAppOpen(
                    message, policy: policy, key: key, counts: result, callID: callID, responder: responder)
            } catch let error as any StatusConvertible {
                if responder.isOpen { responder.finish(callID, status: error.status) }
            } catch {
                if responder.isOpen { responder.finish(callID, status: Status(code: .internalError, message: "\(error)")) }
            }
        }
        return waiting.openIfPending(self, callID: callID, timeout: timeout, responder: responder)
    }

    private func decideAppOpen(
        _ message: AppOpenRequestMessage, policy: AppOpenPolicy, key: CapKey,
        counts result: Result<AppOpenCounts, CapStoreError>, callID: UInt64, responder: any CallResponder
    ) throws {
        guard responder.isOpen else { return }
        var decision: AppOpenDecision
        var storeUnavailable = false
        switch result {
        case .success(let counts):
            decision = policy.decide(message.request, counts: counts, day: key.day)
        case .failure(let error):
            storeUnavailable = true
            logger.warning(
                "app-open counts unavailable", ["error": .string(error.message), "mode": .string(capStoreOutageMode.name)])
            decision = policy.decide(message.request, counts: AppOpenCounts(), day: key.day)
            if capStoreOutageMode == .refuse && decision.shows { decision.reason = .storeUnavailable }
        }
        var answer = AppOpenResponseMessage(
            outcome: decision.shows ? .show : .skip, reason: decision.reason, flags: decision.flags,
            storeUnavailable: storeUnavailable, counts: decision.counts, day: key.day.description)
        guard decision.shows else {
            responder.answer(callID, .message(answer))
            return
        }
        let outcome = try loader.borrow(
            adUnitID: message.adUnitID, loader: key.loader, slot: nil, wait: .zero, mayPark: false,
            whenServed: { _ in })
        guard case .answered(let borrowed) = consume outcome else {
            preconditionFailure("a borrow without a wait parked")
        }
        switch borrowed {
        case .leased(let lease, _):
            appOpenLeases.insert(
                AppOpenLeases.Entry(
                    loader: key.loader, deviceID: key.deviceID, sessionID: key.sessionID,
                    utcOffsetSeconds: key.utcOffsetSeconds, sessionTimeout: policy.sessionTimeout,
                    leaseExpiresAt: lease.expiresAt),
                leaseID: lease.id, now: clock.now)
            answer.lease = lease
        case .noAdYet, .upstreamFailed:  // a borrow without a wait does not fail fast; both mean no ad now
            answer.outcome = .noAdReady
        case .unavailable:
            throw Status(code: .unavailable, message: isDraining ? "server shutting down" : "loader disabled")
        }
        responder.answer(callID, .message(answer))
    }

    /// A Return: an app-open lease returned shown first moves its device's counts (durably),
    /// then ends; any other Return ends at once.
    /// - Returns: an open call when the store answers later (the answer follows then).
    func returnLease(
        _ message: ReturnRequestMessage, callID: UInt64, timeout: Duration?, responder: any CallResponder
    ) throws -> OpenCall? {
        if message.leaseID == 0 {
            throw LoaderError(code: .invalidArgument, field: "lease_id", message: "must not be 0")
        }
        try checkInvalidation(message)
        guard appOpenLeases.count > 0, let entry = appOpenLeases[message.leaseID] else {
            let outcome = try endLease(message)
            responder.answer(callID, .returned(ReturnResponseMessage(outcome: outcome)))
            return nil
        }
        guard message.shown, loader.hasLease(message.leaseID) else {
            appOpenLeases.remove(message.leaseID)
            let outcome = try endLease(message)
            responder.answer(callID, .returned(ReturnResponseMessage(outcome: outcome)))
            return nil
        }
        let now = clock.now
        let key = CapKey(
            loader: entry.loader, deviceID: entry.deviceID, sessionID: entry.sessionID,
            day: LocalDay(at: now, utcOffsetSeconds: entry.utcOffsetSeconds), utcOffsetSeconds: entry.utcOffsetSeconds)
        let waiting = StoreWait()
        capStore.confirmShow(for: key, at: now, sessionTimeout: entry.sessionTimeout) { [weak self] result in
            guard let self else { return }
            // The count moved: end the lease even when the call was cancelled meanwhile, so
            // that a retried Return cannot count the show twice.
            let answer = waiting.complete(self)
            switch result {
            case .success:
                self.appOpenLeases.remove(message.leaseID)
                do throws(LoaderError) {
                    let outcome = try self.endLease(message)
                    if answer && responder.isOpen {
                        responder.answer(callID, .returned(ReturnResponseMessage(outcome: outcome)))
                    }
                } catch {
                    if answer && responder.isOpen { responder.finish(callID, status: error.status) }
                }
            case .failure(let error):
                // The lease stays open: the client may return it again once the store is back.
                self.logger.warning("app-open show not counted", ["error": .string(error.message)])
                if answer && responder.isOpen {
                    responder.finish(
                        callID,
                        status: Status(
                            code: .unavailable,
                            message: "the show could not be counted (cap store: \(error.message)); the lease is still open, return it again"
                        ))
                }
            }
        }
        return waiting.openIfPending(self, callID: callID, timeout: timeout, responder: responder)
    }
}

/// Whether a cap-store call completed before it returned, and the open call that waits for it
/// otherwise (``CapStore``: a store may answer at once or later).
///
/// - Important: loop-confined.
final class StoreWait {
    private var completed = false
    private var call: OpenCall?

    /// Called first in the completion. Returns whether the completion may answer: always when
    /// the store answered before returning; later, only while the open call is still open (it
    /// is then ended and the transport told).
    func complete(_ service: AdLoaderService) -> Bool {
        completed = true
        guard let call else { return true }
        guard service.close(call) else { return false }
        call.responder?.openCallEnded(call)
        return true
    }

    /// After the store call returned: nil when it already completed, else the open call the
    /// transport keeps until the completion answers it (or cancel, deadline, drain end it).
    func openIfPending(
        _ service: AdLoaderService, callID: UInt64, timeout: Duration?, responder: any CallResponder
    ) -> OpenCall? {
        guard !completed else { return nil }
        let open = OpenCall(callID: callID, serial: service.takeSerial(), responder: responder)
        open.state = .storePending
        call = open
        service.register(open, timeout: timeout)
        return open
    }
}
