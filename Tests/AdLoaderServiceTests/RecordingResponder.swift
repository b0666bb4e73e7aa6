import AdLoaderService
import AdLoaderWire
import Testing

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
        /// A message of a call without a case of its own here.
        case other(UInt64, AnyHashable)
        case event(UInt64, EventMessage)
        case status(UInt64, Status)
    }

    var answers: [Answer] = []
    var ended: [UInt64] = []
    var isOpen = true
    var unsentByteCount = 0
    /// What the service added with ``addResponseMetadata(_:_:)``, by call id.
    var responseMetadata: [UInt64: CallMetadata] = [:]

    func answer(_ callID: UInt64, _ response: ServiceResponse) {
        switch response {
        case .borrow(let message): answers.append(.borrow(callID, message))
        case .returned(let message): answers.append(.returned(callID, message))
        case .other(let boxed):
            switch boxed.message {
            case let message as PrefetchResponseMessage: answers.append(.prefetch(callID, message))
            case let message as StatsResponseMessage: answers.append(.stats(callID, message))
            case let message as AppOpenResponseMessage: answers.append(.appOpen(callID, message))
            case let message as SetLoaderEnabledResponseMessage: answers.append(.setLoaderEnabled(callID, message))
            case let message as ReloadResponseMessage: answers.append(.reload(callID, message))
            default: answers.append(.other(callID, AnyHashable(boxed.message)))
            }
        }
    }
    /// As the framed transport sizes an answer (the Stats size check's tests depend on it).
    func answerSize(_ callID: UInt64, messageSize: Int) -> Int {
        ResponseFrame.envelopeSize(callID: callID, messageSize: messageSize)
    }
    func stream(_ callID: UInt64, _ message: some WireMessage) {
        // Watch is the one streaming method: its messages are events.
        guard let event = message as? EventMessage else {
            Issue.record("streamed a \(type(of: message)), not an event")
            return
        }
        answers.append(.event(callID, event))
    }
    func finish(_ callID: UInt64, status: Status) { answers.append(.status(callID, status)) }
    func openCallEnded(_ call: OpenCall) { ended.append(call.callID) }
    func addResponseMetadata(_ callID: UInt64, _ metadata: CallMetadata) {
        for entry in metadata {
            try? responseMetadata[callID, default: CallMetadata()].append(key: entry.key, value: entry.value)
        }
    }

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
