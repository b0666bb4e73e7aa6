import AdLoaderCore

/// A call still open after ``AdLoaderService/handle(_:callID:timeout:responder:)`` returned:
/// a parked Borrow, a Watch, or an AppOpen or Return waiting for a cap store that answers
/// later (``CapStore``).
///
/// The transport keeps it by its call id and ends it with ``AdLoaderService/end(_:answering:)``
/// when the client cancels, reuses the id or goes away; the service ends it by itself when it
/// is served, its deadline passes or the server drains, telling the transport through
/// ``CallResponder/openCallEnded(_:)``.
///
/// - Important: loop-confined.
public final class OpenCall {
    enum State {
        /// Being set up by the service.
        case starting
        case parkedBorrow(any ParkedBorrow)
        case watch(ObserverToken)
        /// An AppOpen or Return whose cap-store call has not completed yet.
        case storePending
        case ended
    }

    /// The transport's id of the call.
    public let callID: UInt64
    /// Orders open calls for a deterministic drain.
    let serial: UInt64
    weak var responder: (any CallResponder)?
    var state = State.starting
    var deadline: (any ScheduledTask)?
    /// For the ``CallObserver``: the method and the observer's timestamp of the call's start.
    var method = ServiceMethod.borrow
    var startedAt: UInt64 = 0

    init(callID: UInt64, serial: UInt64, responder: any CallResponder) {
        self.callID = callID
        self.serial = serial
        self.responder = responder
    }

    /// Whether this is a Borrow waiting for an ad (else a Watch).
    public var isParkedBorrow: Bool {
        if case .parkedBorrow = state { return true }
        return false
    }
}
