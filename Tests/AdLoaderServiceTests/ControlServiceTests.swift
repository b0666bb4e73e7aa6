import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderService

/// The run-time control calls through the service: SetLoaderEnabled, Reload, and the Return
/// that invalidates; garbage refused with clear statuses, the rest of the service unharmed.
@Suite struct ControlServiceTests {
    let clock = ManualClock()
    let loader: NativeAdvertisementLoader
    let responder = RecordingResponder()
    let configuration: LoaderConfiguration

    init() throws {
        var configuration = LoaderConfiguration(name: "default")
        configuration.sizing = .fixed
        configuration.maximumRetainedAdvertisements = 4
        configuration.numberOfAdvertisements = 2
        configuration.minimumRemainingLife = .zero
        self.configuration = configuration
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(100)
        settings.fillRate = 1
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock)
    }

    func service() -> AdLoaderService {
        AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
    }

    /// Fills the pool of "feed" and borrows one ad.
    func lease(_ service: AdLoaderService) throws -> Lease {
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 1, timeout: nil, responder: responder)
        clock.advance(by: .milliseconds(200))
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 2, timeout: nil, responder: responder)
        guard case .borrow(2, let answer)? = responder.take().last, let lease = answer.lease else {
            throw TestFailure("no lease")
        }
        return lease
    }

    func stats(_ service: AdLoaderService) -> StatsResponseMessage? {
        _ = service.handle(.stats(StatsRequestMessage()), callID: 9, timeout: nil, responder: responder)
        guard case .stats(9, let answer)? = responder.take().last else { return nil }
        return answer
    }

    // MARK: SetLoaderEnabled

    @Test func disableAndEnableRoundTripIsShownInStatsAndWatch() throws {
        let service = service()
        _ = try lease(service)
        let watch = service.handle(
            .watch(WatchRequestMessage(kinds: [.loaderChanged])), callID: 5, timeout: nil, responder: responder)
        #expect(watch != nil)
        _ = service.handle(
            .setLoaderEnabled(SetLoaderEnabledRequestMessage(loader: "default", enabled: false)), callID: 3,
            timeout: nil,
            responder: responder)
        let answers = responder.take()
        #expect(answers.contains(.setLoaderEnabled(3, SetLoaderEnabledResponseMessage(changed: true))))
        #expect(answers.contains { if case .event(5, let e) = $0 { e.event.reason == .disabled } else { false } })
        #expect(stats(service)?.loaders.map(\.enabled) == [false])
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 4, timeout: nil, responder: responder)
        #expect(
            responder.take().last == .status(4, Status(code: .unavailable, message: "loader \"default\" is disabled")))
        // Asking again is no change.
        _ = service.handle(
            .setLoaderEnabled(SetLoaderEnabledRequestMessage(loader: "default", enabled: false)), callID: 6,
            timeout: nil,
            responder: responder)
        #expect(responder.take().last == .setLoaderEnabled(6, SetLoaderEnabledResponseMessage(changed: false)))
        _ = service.handle(
            .setLoaderEnabled(SetLoaderEnabledRequestMessage(loader: "default", enabled: true)), callID: 7,
            timeout: nil,
            responder: responder)
        #expect(responder.take().last == .setLoaderEnabled(7, SetLoaderEnabledResponseMessage(changed: true)))
        #expect(stats(service)?.loaders.map(\.enabled) == [true])
        _ = try lease(service)
    }

    @Test(arguments: [
        ("", "loader: must name a loader"),
        ("nope", "loader: unknown loader \"nope\""),
        (String(repeating: "l", count: 129), "loader: must be at most 128 bytes, got 129"),
    ])
    func setLoaderEnabledRefusesABadLoaderAndChangesNothing(name: String, message: String) throws {
        let service = service()
        let lease = try lease(service)
        _ = service.handle(
            .setLoaderEnabled(SetLoaderEnabledRequestMessage(loader: name, enabled: false)), callID: 3, timeout: nil,
            responder: responder)
        #expect(responder.take() == [.status(3, Status(code: .invalidArgument, message: message))])
        #expect(stats(service)?.loaders.map(\.enabled) == [true])
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: false)), callID: 4, timeout: nil,
            responder: responder)
        #expect(responder.take() == [.returned(4, ReturnResponseMessage(outcome: .backInPool))])
    }

    // MARK: Invalidating Return

    @Test func aReturnWithInvalidateRemovesTheAdAndBlocksItsCreative() throws {
        let service = service()
        let lease = try lease(service)
        let watch = service.handle(
            .watch(WatchRequestMessage(kinds: [.removed])), callID: 5, timeout: nil, responder: responder)
        #expect(watch != nil)
        _ = service.handle(
            .returnLease(
                ReturnRequestMessage(
                    leaseID: lease.id, shown: false, invalidate: true, invalidateReason: "bad creative")),
            callID: 3, timeout: nil, responder: responder)
        let answers = responder.take()
        #expect(answers.last == .returned(3, ReturnResponseMessage(outcome: .invalidated)))
        let removed = answers.compactMap { if case .event(5, let e) = $0 { e.event } else { nil } }
        #expect(removed.first?.adID == lease.ad.id)
        #expect(removed.first?.reason == .invalidated)
        #expect(removed.first?.note == "bad creative")
        #expect(stats(service)?.loaders.map(\.blockedCreatives) == [1])
        // The lease is gone.
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: false)), callID: 4, timeout: nil,
            responder: responder)
        #expect(
            responder.take() == [
                .status(4, Status(code: .notFound, message: "lease_id: lease \(lease.id) was already returned"))
            ])
    }

    @Test(arguments: [
        (true, "", "invalidate_reason: required with invalidate (why, e.g. \"bad creative\")"),
        (true, "   ", "invalidate_reason: required with invalidate (why, e.g. \"bad creative\")"),
        (true, String(repeating: "x", count: 1_025), "invalidate_reason: must be at most 1024 bytes, got 1025"),
        (false, "bad creative", "invalidate_reason: set without invalidate"),
    ])
    func aBadInvalidationIsRefusedAndTheLeaseStaysOpen(invalidate: Bool, reason: String, message: String) throws {
        let service = service()
        let lease = try lease(service)
        _ = service.handle(
            .returnLease(
                ReturnRequestMessage(leaseID: lease.id, shown: false, invalidate: invalidate, invalidateReason: reason)),
            callID: 3, timeout: nil, responder: responder)
        #expect(responder.take() == [.status(3, Status(code: .invalidArgument, message: message))])
        #expect(loader.hasLease(lease.id))
        #expect(stats(service)?.loaders.map(\.blockedCreatives) == [0])
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: false)), callID: 4, timeout: nil,
            responder: responder)
        #expect(responder.take() == [.returned(4, ReturnResponseMessage(outcome: .backInPool))])
    }

    @Test func aReasonOfExactlyTheLimitIsAccepted() throws {
        let service = service()
        let lease = try lease(service)
        let reason = String(repeating: "é", count: 512)
        _ = service.handle(
            .returnLease(
                ReturnRequestMessage(leaseID: lease.id, shown: false, invalidate: true, invalidateReason: reason)),
            callID: 3, timeout: nil, responder: responder)
        #expect(responder.take().last == .returned(3, ReturnResponseMessage(outcome: .invalidated)))
    }

    // MARK: Reload

    @Test func reloadAnswersWhatChangedAndKeepsAnUnchangedLoadersPool() throws {
        let service = service()
        let lease = try lease(service)
        let before = loader.stats()
        var second = configuration
        second.name = "second"
        service.reloader = { [loader, configuration] () throws(ConfigError) in
            try loader.reconfigure(loaders: [configuration, second])
        }
        _ = service.handle(.reload(ReloadRequestMessage()), callID: 3, timeout: nil, responder: responder)
        var expected = ReconfigureResult()
        expected.added = ["second"]
        expected.unchanged = ["default"]
        #expect(responder.take() == [.reload(3, ReloadResponseMessage(result: expected))])
        #expect(loader.stats() == before)
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: false)), callID: 4, timeout: nil,
            responder: responder)
        #expect(responder.take() == [.returned(4, ReturnResponseMessage(outcome: .backInPool))])
        #expect(stats(service)?.loaders.map(\.name) == ["default", "second"])
    }

    @Test func aRefusedReloadAnswersFailedPreconditionWithTheReasonAndServesOn() throws {
        let service = service()
        let lease = try lease(service)
        service.reloader = { () throws(ConfigError) in
            throw ConfigError(
                field: "listeners.port", message: "changes only at restart (restart adloaderd to apply it)")
        }
        _ = service.handle(.reload(ReloadRequestMessage()), callID: 3, timeout: nil, responder: responder)
        #expect(
            responder.take() == [
                .status(
                    3,
                    Status(
                        code: .failedPrecondition,
                        message:
                            "configuration refused, the running one is unchanged: listeners.port: changes only at restart (restart adloaderd to apply it)"
                    ))
            ])
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: false)), callID: 4, timeout: nil,
            responder: responder)
        #expect(responder.take() == [.returned(4, ReturnResponseMessage(outcome: .backInPool))])
    }

    @Test func withoutAReloaderReloadIsUnimplemented() {
        let service = service()
        _ = service.handle(.reload(ReloadRequestMessage()), callID: 3, timeout: nil, responder: responder)
        guard case .status(3, let status)? = responder.take().first else {
            Issue.record("reload answered")
            return
        }
        #expect(status.code == .unimplemented)
    }

    @Test func theControlMethodsDecodeFromTheirNames() throws {
        let enable = SetLoaderEnabledRequestMessage(loader: "default", enabled: true).encoded()
        let request = try enable.withUnsafeBytes {
            try ServiceRequest(method: MethodName.setLoaderEnabled, message: $0)
        }
        #expect(request == .setLoaderEnabled(SetLoaderEnabledRequestMessage(loader: "default", enabled: true)))
        #expect(request.method.name == "SetLoaderEnabled")
        let reload = try [UInt8]().withUnsafeBytes { try ServiceRequest(method: MethodName.reload, message: $0) }
        #expect(reload == .reload(ReloadRequestMessage()))
        let invalidating = ReturnRequestMessage(leaseID: 7, shown: true, invalidate: true, invalidateReason: "bad")
            .encoded()
        let returned = try invalidating.withUnsafeBytes {
            try ServiceRequest(method: MethodName.returnLease, message: $0)
        }
        #expect(
            returned
                == .returnLease(
                    ReturnRequestMessage(leaseID: 7, shown: true, invalidate: true, invalidateReason: "bad")))
        let viaC = try invalidating.withUnsafeBytes { try ReturnRequestMessage(protobufC: $0) }
        #expect(viaC == ReturnRequestMessage(leaseID: 7, shown: true, invalidate: true, invalidateReason: "bad"))
        // A reason that is not UTF-8 is refused naming the field.
        let garbage: [UInt8] = [0x08, 0x07, 0x18, 0x01, 0x22, 0x02, 0xC3, 0x28]
        #expect(throws: Status.self) {
            try garbage.withUnsafeBytes { try ServiceRequest(method: MethodName.returnLease, message: $0) }
        }
    }
}

/// A shown Return's device fields: checked where they arrive, then handed to the source with the
/// show (its billing notice forwards them).
@Suite struct ReturnDeviceTests {
    @Test(arguments: [
        "203.0.113.7", "0.0.0.0", "255.255.255.255", "2001:db8::7", "::1", "::", "fe80::1:2:3:4",
        "2001:0db8:0000:0000:0000:ff00:0042:8329", "::ffff:192.0.2.1", "64:ff9b::198.51.100.7", "1::",
    ])
    func ipLiteralsAreAccepted(text: String) {
        #expect(AdLoaderService.isIPLiteral(text))
    }

    @Test(arguments: [
        "", "1", "203.0.113", "203.0.113.256", "203.0.113.07", "a.b.c.d", "203.0.113.7 ", " 203.0.113.7",
        "203.0.113.7\r\nX-Injected: 1", "2001:db8:::7", "2001::db8::7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7",
        ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", "12345::", "g::1", "::ffff:192.0.2", "localhost", "[::1]",
    ])
    func otherTextIsRefused(text: String) {
        #expect(!AdLoaderService.isIPLiteral(text))
    }

    /// A source that answers 1 ms later (never from inside `loadAds`) and records every show
    /// with its device.
    final class RecordingSource: DemandSource {
        let clock: ManualClock
        var shows: [(id: String, device: ImpressionDevice)] = []
        init(clock: ManualClock) { self.clock = clock }
        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {
            _ = clock.schedule(at: clock.now + .milliseconds(1)) {
                completion(
                    .success((0..<count).map { _ in DeliveredAd(creative: .native(NativeAdContent(headline: "h"))) }))
            }
        }
        func adShown(_ ad: Ad, device: ImpressionDevice) { shows.append((ad.id, device)) }
    }

    @Test func aShownReturnHandsTheDeviceToTheSourceAndBadFieldsAreRefused() throws {
        let clock = ManualClock()
        var configuration = LoaderConfiguration(name: "default")
        configuration.sizing = .fixed
        configuration.maximumRetainedAdvertisements = 3
        configuration.minimumRemainingLife = .zero
        let source = RecordingSource(clock: clock)
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock)
        let service = AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
        let responder = RecordingResponder()
        func lease(_ call: UInt64) throws -> UInt64 {
            _ = service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: call, timeout: nil, responder: responder)
            clock.advance(by: .milliseconds(10))
            _ = service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: call + 100, timeout: nil, responder: responder)
            for answer in responder.take().reversed() {
                if case .borrow(_, let message) = answer, let lease = message.lease { return lease.id }
            }
            throw TestFailure("no lease")
        }
        let first = try lease(1)
        for (ip, agent, status) in [
            ("203.0.113.300", "", "device_ip: must be an IPv4 or IPv6 address such as 203.0.113.7 or 2001:db8::7"),
            ("", "Mozilla\r\nX-Injected: 1", "device_user_agent: must not contain control characters"),
            ("", String(repeating: "u", count: 1025), "device_user_agent: must be at most 1024 bytes, got 1025"),
        ] {
            _ = service.handle(
                .returnLease(
                    ReturnRequestMessage(leaseID: first, shown: true, deviceIP: ip, deviceUserAgent: agent)),
                callID: 5, timeout: nil, responder: responder)
            #expect(responder.take() == [.status(5, Status(code: .invalidArgument, message: status))])
        }
        #expect(source.shows.isEmpty, "a refused Return counts no show")
        _ = service.handle(
            .returnLease(
                ReturnRequestMessage(
                    leaseID: first, shown: true, deviceIP: "2001:db8::7", deviceUserAgent: "Mozilla/5.0 (Linux)")),
            callID: 6, timeout: nil, responder: responder)
        #expect(responder.take() == [.returned(6, ReturnResponseMessage(outcome: .consumed))])
        #expect(source.shows.map(\.device) == [ImpressionDevice(ip: "2001:db8::7", userAgent: "Mozilla/5.0 (Linux)")])
        // A shown Return without the fields: the source is told with an empty device.
        let second = try lease(10)
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: second, shown: true)), callID: 7, timeout: nil,
            responder: responder)
        #expect(source.shows.last?.device == ImpressionDevice())
        #expect(source.shows.count == 2)
    }
}
