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
