import AdLoaderService
import AdLoaderWire

/// A ``CallResponder`` that records what the service answers, in order.
final class RecordingResponder: CallResponder {
    enum Answer: Equatable {
        case borrow(UInt64, BorrowResponseMessage)
        case returned(UInt64, ReturnResponseMessage)
        case prefetch(UInt64, PrefetchResponseMessage)
        case stats(UInt64, StatsResponseMessage)
        case appOpen(UInt64, AppOpenResponseMessage)
        case setLoaderEnabled(UInt64, SetLoaderEnabledResponseMessage)
        case reload(UInt64, ReloadResponseMessage)
        case event(UInt64, EventMessage)
        case status(UInt64, Status)
    }

    var answers: [Answer] = []
    var ended: [UInt64] = []
    var isOpen = true
    var unsentByteCount = 0

    func answer(_ callID: UInt64, borrow: BorrowResponseMessage) { answers.append(.borrow(callID, borrow)) }
    func answer(_ callID: UInt64, returned: ReturnResponseMessage) { answers.append(.returned(callID, returned)) }
    func answer(_ callID: UInt64, prefetch: PrefetchResponseMessage) { answers.append(.prefetch(callID, prefetch)) }
    func answer(_ callID: UInt64, stats: StatsResponseMessage) { answers.append(.stats(callID, stats)) }
    func answer(_ callID: UInt64, appOpen: AppOpenResponseMessage) { answers.append(.appOpen(callID, appOpen)) }
    func answer(_ callID: UInt64, setLoaderEnabled: SetLoaderEnabledResponseMessage) {
        answers.append(.setLoaderEnabled(callID, setLoaderEnabled))
    }
    func answer(_ callID: UInt64, reload: ReloadResponseMessage) { answers.append(.reload(callID, reload)) }
    func stream(_ callID: UInt64, event: EventMessage) { answers.append(.event(callID, event)) }
    func finish(_ callID: UInt64, status: Status) { answers.append(.status(callID, status)) }
    func openCallEnded(_ call: OpenCall) { ended.append(call.callID) }

    /// The status of the last answer, OK for a message.
    var lastStatus: Status? {
        guard let last = answers.last else { return nil }
        if case .status(_, let status) = last { return status }
        return .ok
    }

    func take() -> [Answer] {
        defer { answers.removeAll() }
        return answers
    }
}
