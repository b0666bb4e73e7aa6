import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// Encoded request messages, and the expectations checks put on answers.
enum Requests {
    static func prefetch(_ adUnitID: String, loader: String) -> [UInt8] {
        PrefetchRequestMessage(adUnitID: adUnitID, loader: loader).encoded()
    }

    static func borrow(_ adUnitID: String, loader: String, slot: String = "", waitMilliseconds: UInt32 = 0) -> [UInt8] {
        BorrowRequestMessage(adUnitID: adUnitID, loader: loader, slot: slot, waitMilliseconds: waitMilliseconds)
            .encoded()
    }

    static func returnLease(_ leaseID: UInt64, shown: Bool = false) -> [UInt8] {
        ReturnRequestMessage(leaseID: leaseID, shown: shown).encoded()
    }

    static func invalidatingReturn(_ leaseID: UInt64, reason: String) -> [UInt8] {
        ReturnRequestMessage(leaseID: leaseID, shown: false, invalidate: true, invalidateReason: reason).encoded()
    }

    static func setLoaderEnabled(_ loader: String, enabled: Bool) -> [UInt8] {
        SetLoaderEnabledRequestMessage(loader: loader, enabled: enabled).encoded()
    }

    static func stats(loader: String, adUnitID: String) -> [UInt8] {
        StatsRequestMessage(loader: loader, adUnitID: adUnitID).encoded()
    }

    static func watch(loader: String, adUnitID: String, kinds: [AdEvent.Kind] = []) -> [UInt8] {
        WatchRequestMessage(loader: loader, adUnitID: adUnitID, kinds: kinds).encoded()
    }
}

extension CallResult {
    /// The single response message of an OK unary call; an absent message is the empty
    /// encoding of an all-default response (PROTOCOL.md 4.2).
    /// - Throws: when the status is not OK or the call answered more than one message.
    func okMessage(_ what: String) throws(CheckFailure) -> [UInt8] {
        guard status.code == .ok else { throw CheckFailure("\(what): expected OK, got \(status)") }
        guard messages.count <= 1 else {
            throw CheckFailure("\(what): a unary call answered \(messages.count) messages")
        }
        return messages.first ?? []
    }

    /// Checks the call ended with `code`, its message naming `field` when given.
    /// - Returns: the status, for the check's detail.
    @discardableResult
    func expect(_ code: Status.Code, naming field: String? = nil, _ what: String) throws(CheckFailure) -> Status {
        guard status.code == code else { throw CheckFailure("\(what): expected \(code), got \(status)") }
        if let field, !status.message.contains(field) {
            throw CheckFailure("\(what): \(code) as expected, but the message does not name \"\(field)\": \(status)")
        }
        return status
    }
}

/// Decodes a response message, failing the check when it does not decode.
func decode<Message: WireMessage>(_ type: Message.Type, _ bytes: [UInt8], _ what: String) throws(CheckFailure)
    -> Message
{
    do {
        return try Message(decoding: bytes)
    } catch {
        throw CheckFailure("\(what): the response message does not decode as \(Message.self): \(error)")
    }
}

/// The lease of a Borrow answer, failing unless it is `expected` (.leased or .reused).
func lease(
    of result: CallResult, _ expected: BorrowResponseMessage.Outcome, _ what: String
) throws(CheckFailure) -> Lease {
    let response = try decode(BorrowResponseMessage.self, try result.okMessage(what), what)
    guard response.outcome == expected else {
        throw CheckFailure("\(what): expected outcome \(expected), got \(response.outcome)")
    }
    guard let lease = response.lease else { throw CheckFailure("\(what): outcome \(expected) without a lease") }
    guard lease.id != 0 else { throw CheckFailure("\(what): lease id 0 (must never be 0)") }
    return lease
}
