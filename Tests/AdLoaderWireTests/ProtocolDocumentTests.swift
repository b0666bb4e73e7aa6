import AdLoaderCore
import AdLoaderWire
import Foundation
import Testing

/// The worked examples of Proto/PROTOCOL.md, built with the encoder. The document's
/// ```hex NAME``` blocks must match these bytes exactly.
///
/// To print fresh blocks: `ADLOADER_PRINT_PROTOCOL_EXAMPLES=1 swift test --skip-build --filter ProtocolDocumentTests`.
enum ProtocolExamples {
    static let ad: Ad = {
        let content = NativeAdContent(
            headline: "Trail shoes", callToAction: "Shop now", advertiser: "Acme", clickURL: "https://acme.example/c")
        return Ad(
            id: "ad-1", adUnitID: "feed-native", loader: "default", creative: .native(content),
            loadedAt: AdInstant(unixMilliseconds: 1_764_430_000_000),
            expiresAt: AdInstant(unixMilliseconds: 1_764_433_600_000))
    }()

    /// A clock that never moves and a scheduler that never runs, for a loader asked only to
    /// refuse requests.
    final class StillClock: AdClock, AdScheduler, DemandSource {
        final class Never: ScheduledTask { func cancel() {} }
        let now = AdInstant(unixMilliseconds: 1_764_430_000_000)
        func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask { Never() }
        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {}
    }

    /// The status the daemon really answers when the core refuses `call`: the error examples
    /// come from the code, not from text typed into the test.
    /// - Parameter loaders: the loaders besides `default`, each with source "still".
    static func statusOfCoreError(
        loaders: [LoaderConfiguration] = [], _ call: (NativeAdvertisementLoader) throws -> Void
    ) -> Status {
        let still = StillClock()
        var configuration = LoaderConfiguration()
        configuration.source = "still"
        let others = loaders.map { loader in
            var loader = loader
            loader.source = "still"
            return loader
        }
        do {
            let loader = try NativeAdvertisementLoader(
                loaders: [configuration] + others, sources: ["still": still], clock: still, scheduler: still)
            try call(loader)
        } catch let error as LoaderError {
            return error.status
        } catch {
            return Status(code: .internalError, message: "\(error)")
        }
        return .ok
    }

    static func frame(_ message: some WireMessage) -> [UInt8] {
        var out: [UInt8] = []
        message.appendFrame(to: &out)
        return out
    }

    /// The names of the blocks that start a stream: the preface, then a frame (PROTOCOL.md 10.1).
    static let streamStarts = ["borrow-request", "borrow-response"]

    static let all: [(name: String, bytes: [UInt8])] = [
        ("preface", ProtocolPreface.bytes),
        (
            "borrow-request",
            ProtocolPreface.bytes
                + frame(
                    RequestFrame(
                        callID: 1, method: MethodName.borrow,
                        request: BorrowRequestMessage(
                            adUnitID: "feed-native", slot: "feed-42/position-7", waitMilliseconds: 500),
                        timeoutMilliseconds: 2000))
        ),
        (
            "borrow-response",
            {
                var out = ProtocolPreface.bytes
                let lease = Lease(
                    id: 1, slot: "feed-42/position-7", expiresAt: AdInstant(unixMilliseconds: 1_764_430_300_000), ad: ad
                )
                ResponseFrame.append(
                    callID: 1, message: BorrowResponseMessage(outcome: .leased, lease: lease), to: &out)
                return out
            }()
        ),
        (
            "return-request",
            frame(
                RequestFrame(
                    callID: 2, method: MethodName.returnLease, request: ReturnRequestMessage(leaseID: 99, shown: true)))
        ),
        (
            "return-not-found",
            frame(
                ResponseFrame(callID: 2, end: true, status: statusOfCoreError { try $0.returnLease(99, shown: true) }))
        ),
        (
            "borrow-empty-ad-unit",
            frame(RequestFrame(callID: 3, method: MethodName.borrow, request: BorrowRequestMessage(adUnitID: "")))
        ),
        (
            "borrow-invalid-argument",
            frame(
                ResponseFrame(
                    callID: 3, end: true,
                    status: statusOfCoreError { _ = try $0.borrow(adUnitID: "", whenServed: { _ in }) }))
        ),
        (
            "watch-request",
            frame(
                RequestFrame(
                    callID: 4, method: MethodName.watch, request: WatchRequestMessage(kinds: [.leased, .returned])))
        ),
        (
            "watch-event",
            {
                var event = AdEvent(
                    kind: .leased, at: AdInstant(unixMilliseconds: 1_764_430_000_500), loader: "default",
                    adUnitID: "feed-native")
                event.adID = "ad-1"
                event.leaseID = 1
                event.slot = "feed-42/position-7"
                var out: [UInt8] = []
                ResponseFrame.append(callID: 4, message: EventMessage(event: event), end: false, to: &out)
                return out
            }()
        ),
        (
            "watch-restored",
            {
                var event = AdEvent(
                    kind: .restored, at: AdInstant(unixMilliseconds: 1_764_430_000_100), loader: "default",
                    adUnitID: "feed-native")
                event.count = 9
                event.restoration = AdEvent.Restoration(origin: .suspension, leases: 2, expired: 1)
                var out: [UInt8] = []
                ResponseFrame.append(callID: 4, message: EventMessage(event: event), end: false, to: &out)
                return out
            }()
        ),
        ("cancel-request", frame(RequestFrame.cancel(callID: 4))),
        (
            "watch-cancelled",
            frame(
                ResponseFrame(
                    callID: 4, end: true, status: Status(code: .cancelled, message: "cancelled by the client")))
        ),
        (
            "app-open-request",
            frame(
                RequestFrame(
                    callID: 5, method: MethodName.appOpen,
                    request: AppOpenRequestMessage(
                        request: AppOpenRequest(
                            deviceID: "d-1", sessionID: "s-1", event: .foreground, backgroundDuration: .seconds(600),
                            utcOffsetSeconds: 19_800),
                        adUnitID: "splash", loader: "appopen")))
        ),
        (
            "app-open-skip",
            frame(
                ResponseFrame(
                    callID: 5,
                    message: AppOpenResponseMessage(
                        outcome: .skip, reason: .dailyCapReached,
                        flags: AppOpenDecision.Flags(thresholdReached: true, dailyCapReached: true),
                        counts: AppOpenCounts(session: 0, day: 3), day: "2026-12-01"
                    ).encoded(), end: true))
        ),
        (
            "full-screen-borrow-response",
            frame(
                ResponseFrame(
                    callID: 6,
                    message: BorrowResponseMessage(
                        outcome: .leased,
                        lease: Lease(
                            id: 7, slot: nil, expiresAt: AdInstant(unixMilliseconds: 1_764_430_300_000),
                            ad: Ad(
                                id: "ad-2", adUnitID: "splash", loader: "appopen",
                                creative: .fullScreen(
                                    FullScreenCreative(
                                        media: .videoURL("https://v.example/a.mp4"), orientation: .portrait)),
                                format: .appOpen, loadedAt: AdInstant(unixMilliseconds: 1_764_430_000_000),
                                expiresAt: AdInstant(unixMilliseconds: 1_764_433_600_000)))
                    ).encoded(), end: true))
        ),
        (
            "vast-borrow-response",
            frame(
                ResponseFrame(
                    callID: 7,
                    message: BorrowResponseMessage(
                        outcome: .leased,
                        lease: Lease(
                            id: 8, slot: nil, expiresAt: AdInstant(unixMilliseconds: 1_764_430_300_000),
                            ad: Ad(
                                id: "ad-3", adUnitID: "level-end", loader: "rewarded",
                                creative: .fullScreen(
                                    FullScreenCreative(
                                        media: .vastXML(#"<VAST version="4.0"/>"#), orientation: .portrait,
                                        width: 1080, height: 1920)),
                                format: .rewarded, loadedAt: AdInstant(unixMilliseconds: 1_764_430_000_000),
                                expiresAt: AdInstant(unixMilliseconds: 1_764_433_600_000)))
                    ).encoded(), end: true))
        ),
        (
            "plan-request",
            frame(
                RequestFrame(
                    callID: 7, method: MethodName.plan,
                    request: PlanRequestMessage(
                        feedID: "u1", adUnitID: "home", firstVisible: 0, lastVisible: 7, ahead: 3)
                ))
        ),
        (
            "plan-response",
            frame(
                ResponseFrame(
                    callID: 7,
                    message: PlanResponseMessage(
                        plan: FeedPlan(
                            positions: [
                                PlannedPosition(position: 1, state: .empty),
                                PlannedPosition(position: 9, state: .coming),
                            ], created: true)
                    ).encoded(), end: true))
        ),
    ]

    /// 16 bytes per line, lower-case hex separated by spaces.
    static func hex(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            bytes[start..<min(start + 16, bytes.count)].map { b in
                let s = String(b, radix: 16)
                return s.count == 1 ? "0" + s : s
            }.joined(separator: " ")
        }.joined(separator: "\n")
    }
}

@Suite struct ProtocolDocumentTests {
    static let document = GeneratedCodeTests.packageRoot.appendingPathComponent("Proto/PROTOCOL.md")

    /// The ```hex NAME blocks of the document, by name.
    static func hexBlocks() throws -> [String: [UInt8]] {
        let text = try String(contentsOf: document, encoding: .utf8)
        var blocks: [String: [UInt8]] = [:]
        var current: String? = nil
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let name = current {
                if trimmed == "```" {
                    blocks[name] = bytes
                    current = nil
                } else {
                    for token in trimmed.split(separator: " ") {
                        guard let b = UInt8(token, radix: 16) else {
                            throw CocoaError(.fileReadCorruptFile, userInfo: ["token": String(token), "block": name])
                        }
                        bytes.append(b)
                    }
                }
            } else if trimmed.hasPrefix("```hex ") {
                current = String(trimmed.dropFirst(7)).trimmingCharacters(in: .whitespaces)
                bytes = []
            }
        }
        return blocks
    }

    @Test func printExamplesWhenAsked() {
        guard ProcessInfo.processInfo.environment["ADLOADER_PRINT_PROTOCOL_EXAMPLES"] != nil else { return }
        for (name, bytes) in ProtocolExamples.all {
            print("```hex \(name)\n\(ProtocolExamples.hex(bytes))\n```\n")
        }
    }

    @Test func everyExampleInTheDocumentMatchesTheEncoder() throws {
        let blocks = try Self.hexBlocks()
        for (name, bytes) in ProtocolExamples.all {
            let documented = try #require(blocks[name], "PROTOCOL.md has no ```hex \(name) block")
            #expect(documented == bytes, "```hex \(name) differs from the encoder:\n\(ProtocolExamples.hex(bytes))")
        }
        #expect(Set(blocks.keys) == Set(ProtocolExamples.all.map(\.name)), "PROTOCOL.md has hex blocks no test checks")
    }

    static func example(_ name: String) -> [UInt8] { ProtocolExamples.all.first { $0.name == name }!.bytes }

    /// Each direction's bytes in 10.1 start with the preface, exactly as a decoder that expects
    /// it (the other side's) reads them, and then hold exactly one whole frame.
    @Test(arguments: ProtocolExamples.streamStarts)
    func streamExamplesStartWithThePreface(name: String) throws {
        let bytes = Self.example(name)
        #expect(bytes.starts(with: Self.example("preface")))
        var decoder = FrameDecoder(maximumMessageSize: 4 << 20, expectingPreface: true)
        decoder.append(bytes)
        #expect(try decoder.next() != nil)
        #expect(decoder.prefaceReceived && decoder.bufferedByteCount == 0)
    }

    @Test func examplesDecodeAsDocumented() throws {
        var server = FrameDecoder(maximumMessageSize: 4 << 20, expectingPreface: true)
        server.append(Self.example("borrow-request"))
        let request = try RequestFrame(decoding: try #require(try server.next()))
        #expect(request.callID == 1 && request.method == MethodName.borrow && request.timeoutMilliseconds == 2000)
        let borrowRequest = try BorrowRequestMessage(decoding: request.message)
        #expect(
            borrowRequest
                == BorrowRequestMessage(adUnitID: "feed-native", slot: "feed-42/position-7", waitMilliseconds: 500))

        var client = FrameDecoder(maximumMessageSize: 4 << 20, expectingPreface: true)
        client.append(Self.example("borrow-response"))
        let response = try ResponseFrame(decoding: try #require(try client.next()))
        #expect(response.callID == 1 && response.end && response.status == .ok)
        let borrow = try BorrowResponseMessage(decoding: try #require(response.message))
        #expect(borrow.lease?.ad == ProtocolExamples.ad)
    }

    /// The refusals PROTOCOL.md quotes from the core, character for character.
    @Test func quotedMessagesAreTheCoresOwn() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        var disabled = LoaderConfiguration(name: "x")
        disabled.enabled = false
        let refusals: [(Status.Code, Status)] = [
            (
                .unavailable,
                ProtocolExamples.statusOfCoreError(loaders: [disabled]) { try $0.prefetch(adUnitID: "a", loader: "x") }
            ),
            (.invalidArgument, ProtocolExamples.statusOfCoreError { try $0.prefetch(adUnitID: "") }),
            (.invalidArgument, ProtocolExamples.statusOfCoreError { try $0.prefetch(adUnitID: "a", loader: "x") }),
            (
                .invalidArgument,
                ProtocolExamples.statusOfCoreError {
                    _ = try $0.borrow(adUnitID: "a", wait: .seconds(31), whenServed: { _ in })
                }
            ),
            (.notFound, ProtocolExamples.statusOfCoreError { try $0.returnLease(99, shown: true) }),
            (
                .resourceExhausted,
                ProtocolExamples.statusOfCoreError { loader in
                    for unit in 0...1_000 { try loader.prefetch(adUnitID: "unit-\(unit)") }
                }
            ),
        ]
        for (code, status) in refusals {
            #expect(status.code == code, "\(status)")
            #expect(text.contains("`\(status.message)`"), "PROTOCOL.md does not quote `\(status.message)`")
        }
    }

    @Test func errorExamplesAreTheCoresRealRefusals() throws {
        for name in ["return-not-found", "borrow-invalid-argument"] {
            let bytes = ProtocolExamples.all.first { $0.name == name }!.bytes
            var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
            decoder.append(bytes)
            let frame = try ResponseFrame(decoding: try #require(try decoder.next()))
            #expect(frame.end && !frame.status.isOK, "\(name): \(frame.status)")
        }
    }
}
