import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

extension EnvelopeFuzz {
    static var ad: Ad {
        let content = NativeAdContent(
            headline: "Headline", body: "Body é🎉", callToAction: "Install", advertiser: "ACME",
            icon: AdImage(url: "https://cdn.example/icon.png", width: 128, height: 128),
            image: AdImage(url: "https://cdn.example/image.jpg", width: 1200, height: 627), starRating: 4.5,
            price: "$4.99", store: "Google Play", clickURL: "https://click.example/?q=1",
            impressionTrackers: ["https://t.example/imp/1", ""], clickTrackers: ["https://t.example/clk/1"],
            adChoicesURL: "https://adchoices.example")
        return Ad(
            id: "ad-1", adUnitID: "feed-native", loader: "default", creative: .native(content),
            loadedAt: AdInstant(unixMilliseconds: 1_764_430_000_000), expiresAt: AdInstant(unixMilliseconds: -1),
            showCount: 2)
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let lease = Lease(
            id: .max, slot: "feed-42/position-7", expiresAt: AdInstant(unixMilliseconds: 1_764_430_300_000), ad: ad)
        var event = AdEvent(
            kind: .loadFinished, at: AdInstant(unixMilliseconds: 5), loader: "default", adUnitID: "feed")
        event.error = UpstreamError(code: .unreachable, message: "no route")
        event.leaseID = 9
        event.slot = "s"
        event.count = 3
        event.reason = .reclaimed
        var pool = PoolStats(loader: "default", adUnitID: "feed")
        pool.available = 3
        pool.borrowHits = .max
        let borrow = BorrowRequestMessage(adUnitID: "feed", loader: "default", slot: "cell-7", waitMilliseconds: 250)
        let requests: [(String, RequestFrame)] = [
            (
                "request-borrow",
                RequestFrame(
                    callID: 1, method: MethodName.borrow, request: borrow, timeoutMilliseconds: 500,
                    metadata: [MetadataEntry(key: "x-trace", value: "abc")])
            ),
            (
                "request-return",
                RequestFrame(
                    callID: 2, method: MethodName.returnLease, request: ReturnRequestMessage(leaseID: 77, shown: true))
            ),
            (
                "request-prefetch",
                RequestFrame(callID: 3, method: MethodName.prefetch, request: PrefetchRequestMessage(adUnitID: "feed"))
            ),
            (
                "request-stats",
                RequestFrame(callID: 4, method: MethodName.stats, request: StatsRequestMessage(loader: "default"))
            ),
            (
                "request-watch",
                RequestFrame(
                    callID: 5, method: MethodName.watch,
                    request: WatchRequestMessage(adUnitID: "feed", kinds: [.received, .returned]))
            ),
            ("request-cancel", RequestFrame.cancel(callID: .max)),
            ("request-unknown-method", RequestFrame(callID: 6, method: "/x.Y/Z", message: [1, 2, 3])),
        ]
        let responses: [(String, ResponseFrame)] = [
            (
                "response-borrow",
                ResponseFrame(
                    callID: 1, message: BorrowResponseMessage(outcome: .leased, lease: lease).encoded(), end: true)
            ),
            (
                "response-no-ad",
                ResponseFrame(callID: 1, message: BorrowResponseMessage(outcome: .noAdYet).encoded(), end: true)
            ),
            (
                "response-return",
                ResponseFrame(callID: 2, message: ReturnResponseMessage(outcome: .consumed).encoded(), end: true)
            ),
            (
                "response-prefetch",
                ResponseFrame(
                    callID: 3,
                    message: PrefetchResponseMessage(result: PrefetchResult(available: 1, inFlight: 2, requested: 3))
                        .encoded(), end: true)
            ),
            (
                "response-stats",
                ResponseFrame(callID: 4, message: StatsResponseMessage(pools: [pool, pool]).encoded(), end: true)
            ),
            ("response-event", ResponseFrame(callID: 5, message: EventMessage(event: event).encoded(), end: false)),
            (
                "response-error",
                ResponseFrame(
                    callID: 6, end: true,
                    status: Status(code: .invalidArgument, message: "ad_unit_id: must not be empty"))
            ),
            (
                "response-connection",
                ResponseFrame(callID: 0, end: true, status: Status(code: .unavailable, message: "shutting down"))
            ),
        ]
        // A method and a metadata value that are not protocol strings (a NUL, bad UTF-8).
        var badMethod = RequestFrame(callID: 7, method: "", request: borrow).encoded()
        badMethod += [0x12, 0x05, 0x2F, 0x61, 0x00, 0xFF, 0x62]
        let badMetadata = [0x08, 0x07, 0x22, 0x06, 0x0A, 0x01, 0x6B, 0x12, 0x01, 0xC0] as [UInt8]
        return requests.map { ($0.0, $0.1.encoded()) } + responses.map { ($0.0, $0.1.encoded()) } + [
            ("borrow-response", BorrowResponseMessage(outcome: .reused, lease: lease).encoded()),
            ("event", EventMessage(event: event).encoded()),
            ("request-bad-method", badMethod),
            ("request-bad-metadata", badMetadata),
            ("empty", []),
        ]
    }
}
