import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderService

/// The metrics hook: every call is reported exactly once, with its method, final status and
/// the timestamp the observer gave when it arrived — answered at once or after staying open.
@Suite struct CallObserverTests {
    let clock = ManualClock()
    let loader: NativeAdvertisementLoader
    let responder = RecordingResponder()
    let observer = RecordingObserver()

    final class RecordingObserver: CallObserver {
        struct Report: Equatable {
            var method: ServiceMethod
            var code: Status.Code
            var startedAt: UInt64
        }
        var next: UInt64 = 100
        var reports: [Report] = []

        func callStarted() -> UInt64 {
            next += 1
            return next
        }

        func callFinished(_ method: ServiceMethod, code: Status.Code, startedAt: UInt64) {
            reports.append(Report(method: method, code: code, startedAt: startedAt))
        }
    }

    init() throws {
        var configuration = LoaderConfiguration(name: "default")
        configuration.maximumRetainedAdvertisements = 2
        configuration.numberOfAdvertisements = 2
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(100)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock)
    }

    func service() -> AdLoaderService {
        let service = AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
        service.callObserver = observer
        return service
    }

    @Test func callsAnsweredAtOnceAreReportedWithTheirStatus() {
        let service = service()
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 1, timeout: nil, responder: responder)
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 2, timeout: nil, responder: responder)
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: 0, shown: false)), callID: 3, timeout: nil, responder: responder)
        _ = service.handle(
            .stats(StatsRequestMessage(adUnitID: String(repeating: "x", count: 500))), callID: 4, timeout: nil,
            responder: responder)
        #expect(
            observer.reports == [
                .init(method: .prefetch, code: .ok, startedAt: 101),
                .init(method: .borrow, code: .ok, startedAt: 102),  // no ad yet is an OK answer
                .init(method: .returnLease, code: .invalidArgument, startedAt: 103),
                .init(method: .stats, code: .invalidArgument, startedAt: 104),
            ])
    }

    @Test func aParkedBorrowIsReportedOnceWhenServedWithItsArrivalTimestamp() throws {
        let service = service()
        let call = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 1_000)), callID: 1, timeout: nil,
            responder: responder)
        #expect(call != nil)
        #expect(observer.reports.isEmpty)
        clock.advance(by: .milliseconds(100))
        #expect(observer.reports == [.init(method: .borrow, code: .ok, startedAt: 101)])
        clock.advance(by: .seconds(5))
        #expect(observer.reports.count == 1)
    }

    @Test func openCallsEndedByDeadlineCancelOrDrainAreReportedWithThatStatus() throws {
        let service = service()
        // A deadline shorter than the source's latency.
        let parked = BorrowRequestMessage(adUnitID: "empty", waitMilliseconds: 10_000)
        _ = service.handle(.borrow(parked), callID: 1, timeout: .milliseconds(50), responder: responder)
        let cancelled = try #require(
            service.handle(.watch(WatchRequestMessage()), callID: 2, timeout: nil, responder: responder))
        _ = service.handle(.watch(WatchRequestMessage()), callID: 3, timeout: nil, responder: responder)
        clock.advance(by: .milliseconds(50))
        #expect(service.end(cancelled, answering: nil))
        #expect(!service.end(cancelled, answering: nil))  // ending twice reports nothing more
        service.beginDrain()
        #expect(
            observer.reports == [
                .init(method: .borrow, code: .deadlineExceeded, startedAt: 101),
                .init(method: .watch, code: .cancelled, startedAt: 102),
                .init(method: .watch, code: .unavailable, startedAt: 103),
            ])
        _ = service.handle(.stats(StatsRequestMessage()), callID: 4, timeout: nil, responder: responder)
        #expect(observer.reports.last == .init(method: .stats, code: .unavailable, startedAt: 104))
    }
}

extension CallObserverTests {
    final class RefusalObserver: CallObserver {
        var refused: [(ServiceMethod?, Status.Code)] = []
        func callStarted() -> UInt64 { 0 }
        func callFinished(_ method: ServiceMethod, code: Status.Code, startedAt: UInt64) {}
        func callRefused(_ method: ServiceMethod?, code: Status.Code) { refused.append((method, code)) }
    }

    @Test func callsRefusedByTheTransportAreReportedByMethodOrAsUnknown() {
        let service = service()
        let refusals = RefusalObserver()
        service.callObserver = refusals
        service.callRefused(method: MethodName.borrow, code: .invalidArgument)
        service.callRefused(method: "/adloader.v1.NativeAdLoader/Nope", code: .unimplemented)
        service.callRefused(method: "", code: .resourceExhausted)
        #expect(refusals.refused.map(\.0) == [.borrow, nil, nil])
        #expect(refusals.refused.map(\.1) == [.invalidArgument, .unimplemented, .resourceExhausted])
        // The default implementation ignores refusals.
        service.callObserver = observer
        service.callRefused(method: MethodName.stats, code: .internalError)
        #expect(observer.reports.isEmpty)
    }
}
