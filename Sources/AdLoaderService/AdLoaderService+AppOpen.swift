import AdLoaderCore
import AdLoaderWire

// AppOpen and the Return of its leases: the call runtime around the core's
// ``AppOpenCoordinator`` (checks about calls, the open call while the cap store answers later,
// the answer). The policy, the counts, the reservations and the tagged leases are the core's.

extension AdLoaderService {
    /// - Returns: an open call when the store answers later (the answer follows then).
    func appOpen(
        _ message: AppOpenRequestMessage, callID: UInt64, timeout: Duration?, responder: any CallResponder
    ) throws -> OpenCall? {
        var request = message.request
        request.privacy = try message.privacy?.signals()
        try checkIdentifier("device_id", request.deviceID)
        try checkIdentifier("session_id", request.sessionID)
        try checkIdentifier("ad_unit_id", message.adUnitID)
        try checkIdentifier("loader", message.loader)
        if let event = message.invalidEvent {
            throw LoaderError(
                code: .invalidArgument, field: "event", message: "must be LAUNCH (1) or FOREGROUND (2), got \(event)")
        }
        let waiting = StoreWait()
        try appOpen.appOpen(
            request, adUnitID: message.adUnitID, loader: loaderName(message.loader),
            isWanted: { [weak self] in
                guard let self, waiting.complete(self) else { return false }
                return responder.isOpen
            }
        ) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let answer):
                if let error = answer.storeError {
                    self.logger.warning(
                        "app-open counts unavailable",
                        ["error": .string(error.message), "mode": .string(self.capStoreOutageMode.name)])
                }
                responder.answer(callID, .message(AppOpenResponseMessage(answer)))
            case .failure(let error):
                let status =
                    error.code == .unavailable && self.isDraining
                    ? Status(code: .unavailable, message: "server shutting down") : error.status
                responder.finish(callID, status: status)
            }
        }
        return waiting.openIfPending(self, callID: callID, timeout: timeout, responder: responder)
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
        try checkDevice(message)
        guard appOpen.needsConfirmation(leaseID: message.leaseID, shown: message.shown) else {
            let outcome = try endLease(message)
            responder.answer(callID, .returned(ReturnResponseMessage(outcome: outcome)))
            return nil
        }
        let waiting = StoreWait()
        try appOpen.confirmShow(leaseID: message.leaseID) { [weak self] result in
            guard let self else { return }
            // The count moved: end the lease even when the call was cancelled meanwhile, so
            // that a retried Return cannot count the show twice.
            let answer = waiting.complete(self)
            switch result {
            case .success:
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
                            message:
                                "the show could not be counted (cap store: \(error.message)); the lease is still open, return it again"
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
