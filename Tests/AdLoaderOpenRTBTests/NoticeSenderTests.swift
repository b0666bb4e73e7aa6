import AdLoaderCore
import AdLoaderHTTP
import AdLoaderTestSupport
import Testing

@testable import AdLoaderOpenRTB

/// An in-memory ``NoticeOutboxStore`` standing for the pool store across "restarts".
final class MemoryNoticeStore: NoticeOutboxStore {
    var notices: [String: [UInt64: OutboxNotice]] = [:]
    func pendingNotices(source: String) -> [OutboxNotice] {
        (notices[source] ?? [:]).values.sorted { $0.id < $1.id }
    }
    func putNotice(_ notice: OutboxNotice, source: String) { notices[source, default: [:]][notice.id] = notice }
    func removeNotice(id: UInt64, source: String) { notices[source]?[id] = nil }
    var count: Int { notices.values.reduce(0) { $0 + $1.count } }
}

struct NoticeSenderTests {
    let clock = ManualClock()
    let store = MemoryNoticeStore()

    func makeSender(_ client: FakeHTTPClient, store: (any NoticeOutboxStore)? = nil, queueLimit: Int = 100)
        -> NoticeSender
    {
        NoticeSender(
            client: client, queueLimit: queueLimit, timeout: .seconds(2), clock: clock, scheduler: clock, store: store,
            sourceName: "rtb")
    }

    @Test(arguments: [200, 204])
    func deliveredOnceOn200Or204(status: Int) {
        let client = FakeHTTPClient()
        let sender = makeSender(client, store: store)
        sender.fire("http://n/bill?b=1")
        #expect(store.count == 1, "stored before the first try")
        client.answer(.success(HTTPResponse(status: status)))
        clock.advance(by: .seconds(120))
        #expect(client.requests.count == 1 && sender.sent == 1 && sender.pending == 0)
        #expect(store.count == 0, "forgotten once delivered")
    }

    @Test(arguments: [201, 302, 404, 500, 503])
    func anyOtherStatusIsTriedAgain(status: Int) {
        let client = FakeHTTPClient()
        let sender = makeSender(client, store: store)
        sender.fire("http://n/bill?b=1")
        client.answer(.success(HTTPResponse(status: status)))
        #expect(store.pendingNotices(source: "rtb").first?.attempts == 1, "the try is counted in the store")
        clock.advance(by: .seconds(10))
        #expect(client.requests.count == 2)
        client.answer(.success(HTTPResponse(status: 200)))
        clock.advance(by: .seconds(120))
        #expect(client.requests.count == 2 && sender.sent == 1 && sender.retried == 1 && store.count == 0)
    }

    @Test func aBadURLIsGivenUpAtOnce() {
        let client = FakeHTTPClient()
        let sender = makeSender(client, store: store)
        sender.fire("not a url")
        client.answer(.failure(HTTPError(code: .badRequest, message: "bad URL")))
        clock.advance(by: .seconds(120))
        #expect(client.requests.count == 1 && sender.failed == 1 && store.count == 0)
    }

    @Test func aStopKeepsUndeliveredNoticesAndTheNextStartSendsEachOnceAndNeverTwice() {
        // Run 1: three notices; one delivered, one waiting for its retry, one in flight at the stop.
        let first = FakeHTTPClient()
        let sender = makeSender(first, store: store)
        sender.fire("http://n/bill?b=1")
        sender.fire("http://n/bill?b=2")
        sender.fire("http://n/loss?b=3")
        #expect(store.pendingNotices(source: "rtb").map(\.sending) == [true, true, true], "marked before each try")
        first.answer(.success(HTTPResponse(status: 200)))
        first.answer(.failure(HTTPError(code: .connectionFailed, message: "refused")))
        sender.close()
        first.answer(.failure(HTTPError(code: .cancelled, message: "closed")))
        clock.advance(by: .seconds(120))
        #expect(first.requests.count == 3, "no retry after the stop")
        let left = store.pendingNotices(source: "rtb")
        #expect(left.map(\.url) == ["http://n/bill?b=2", "http://n/loss?b=3"])
        #expect(
            left.map(\.sending) == [false, true], "the failed try is over; the cut one may have reached the exchange")
        // Run 2: the one between tries goes out; the one cut during its try is uncertain and
        // never sent again (the exchange may have counted it); new ids continue after both.
        let second = FakeHTTPClient()
        let restarted = makeSender(second, store: store)
        #expect(restarted.restore() == 1)
        #expect(restarted.uncertain == 1)
        #expect(second.requests.map(\.url) == ["http://n/bill?b=2"])
        restarted.fire("http://n/bill?b=4")
        #expect(store.pendingNotices(source: "rtb").map(\.id) == [2, 4])
        second.answer(.success(HTTPResponse(status: 204)))
        second.answer(.success(HTTPResponse(status: 200)))
        #expect(store.count == 0 && restarted.sent == 2 && restarted.restored == 1)
        // Run 3: nothing left.
        let third = FakeHTTPClient()
        #expect(makeSender(third, store: store).restore() == 0 && third.requests.isEmpty)
    }

    /// A crash during a try (nothing answered, nothing cancelled): the next start reports the
    /// notice and does not send it; a crash between tries sends it.
    @Test func aCrashDuringATryLeavesTheNoticeUncertainNeverSentTwice() {
        let first = FakeHTTPClient()
        let sender = makeSender(first, store: store)
        sender.fire("http://n/bill?b=1")
        sender.fire("http://n/bill?b=2")
        first.answer(.failure(HTTPError(code: .connectionFailed, message: "refused")))
        // b=1 waits for its retry, b=2 is in flight: the process dies here (no close).
        let second = FakeHTTPClient()
        let restarted = makeSender(second, store: store)
        #expect(restarted.restore() == 1 && restarted.uncertain == 1)
        #expect(second.requests.map(\.url) == ["http://n/bill?b=1"])
        #expect(store.pendingNotices(source: "rtb").map(\.id) == [1])
    }

    @Test func restoredNoticesKeepTheirTriesCounted() {
        store.putNotice(OutboxNotice(id: 9, url: "http://n/bill?b=9", attempts: 6), source: "rtb")
        store.putNotice(OutboxNotice(id: 1, url: "http://n/bill?b=1", attempts: 0), source: "other")
        let client = FakeHTTPClient()
        let sender = makeSender(client, store: store)
        #expect(sender.restore() == 1, "only this source's notices")
        client.answer(.success(HTTPResponse(status: 500)))
        clock.advance(by: .seconds(120))
        #expect(client.requests.count == 1 && sender.failed == 1, "its seventh try was the last")
        #expect(store.pendingNotices(source: "rtb").isEmpty && store.pendingNotices(source: "other").count == 1)
    }

    @Test func withoutAStoreAStopDropsWhatIsLeftAndCountsIt() {
        let client = FakeHTTPClient()
        let sender = makeSender(client)
        sender.fire("http://n/bill?b=1")
        sender.fire("http://n/bill?b=2")
        client.answer(.success(HTTPResponse(status: 500)))
        sender.close()
        client.answer(.failure(HTTPError(code: .cancelled, message: "closed")))
        clock.advance(by: .seconds(120))
        #expect(sender.dropped == 2 && sender.pending == 0 && client.requests.count == 2)
    }

    @Test func waitingRetriesCountAgainstTheQueueLimit() {
        let client = FakeHTTPClient()
        let sender = makeSender(client, queueLimit: 2)
        sender.fire("http://n/1")
        sender.fire("http://n/2")
        client.answer(.success(HTTPResponse(status: 500)))
        #expect(!sender.fire("http://n/3"), "the one waiting for its retry still holds its place")
        #expect(sender.dropped == 1)
    }
}
