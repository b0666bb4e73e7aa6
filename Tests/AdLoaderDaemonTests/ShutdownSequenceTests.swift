import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderTestSupport
import AdLoaderWire
import Testing

@testable import AdLoaderDaemon

/// The two-phase shutdown over a list of transports: every transport announces, the service
/// drains only once all announced, the parts stop only once all drained; a third transport
/// joins by being in the list.
@Suite struct ShutdownSequenceTests {
    /// A transport that records the calls and reports when the test says so.
    final class FakeTransport: ServerTransport {
        let name: String
        var connectionCount = 0
        var log: [String] = []
        var whenAnnounced: (() -> Void)?
        var whenDrained: (() -> Void)?
        var drainGrace: Duration?
        let announcesAtOnce: Bool

        init(_ name: String, announcesAtOnce: Bool = false) {
            self.name = name
            self.announcesAtOnce = announcesAtOnce
        }

        func announceShutdown(
            status: Status, gracePeriod: Duration, announceLimit: Duration, whenAnnounced: @escaping () -> Void
        ) {
            log.append("announce")
            if announcesAtOnce { whenAnnounced() } else { self.whenAnnounced = whenAnnounced }
        }

        func drain(status: Status, gracePeriod: Duration, whenDrained: @escaping () -> Void) {
            log.append("drain")
            drainGrace = gracePeriod
            self.whenDrained = whenDrained
        }

        func closeAll(reason: String) { log.append("closeAll") }
        func stop() { log.append("stop") }
    }

    @Test func theServiceDrainsWhenEveryTransportAnnouncedAndThePartsStopWhenEveryOneDrained() {
        let framed = FakeTransport("framed", announcesAtOnce: true)
        let grpc = FakeTransport("grpc")
        let third = FakeTransport("third")
        var events: [String] = []
        var left = Duration.seconds(10)
        let sequence = ShutdownSequence(
            transports: [framed, grpc, third], status: Status(code: .unavailable, message: "server shutting down"),
            gracePeriod: .seconds(10), announceLimit: .seconds(1), remainingGrace: { left },
            drainService: { events.append("service drains") }, stop: { events.append("stop") })
        sequence.begin()
        #expect([framed, grpc, third].map(\.log) == [["announce"], ["announce"], ["announce"]])
        #expect(sequence.state == .announcing(waiting: [1, 2]))
        grpc.whenAnnounced?()
        grpc.whenAnnounced?()  // a second report changes nothing
        #expect(events.isEmpty)
        left = .seconds(9)
        third.whenAnnounced?()
        #expect(events == ["service drains"])
        #expect(
            [framed, grpc, third].map(\.log) == [
                ["announce", "drain"], ["announce", "drain"], ["announce", "drain"],
            ])
        #expect(framed.drainGrace == .seconds(9))
        framed.whenDrained?()
        third.whenDrained?()
        #expect(events == ["service drains"])
        grpc.whenDrained?()
        #expect(events == ["service drains", "stop"])
        #expect(sequence.state == .drained)
        sequence.begin()
        #expect(events == ["service drains", "stop"], "begins once")
    }

    @Test func transportsThatReportAtOnceGoStraightThrough() {
        final class Immediate: ServerTransport {
            let name = "immediate"
            var connectionCount: Int { 0 }
            func announceShutdown(
                status: Status, gracePeriod: Duration, announceLimit: Duration, whenAnnounced: @escaping () -> Void
            ) { whenAnnounced() }
            func drain(status: Status, gracePeriod: Duration, whenDrained: @escaping () -> Void) { whenDrained() }
            func closeAll(reason: String) {}
            func stop() {}
        }
        var events: [String] = []
        let sequence = ShutdownSequence(
            transports: [Immediate(), Immediate()], status: Status(code: .unavailable, message: "x"),
            gracePeriod: .seconds(1), announceLimit: .seconds(1), remainingGrace: { .seconds(1) },
            drainService: { events.append("service drains") }, stop: { events.append("stop") })
        sequence.begin()
        #expect(events == ["service drains", "stop"])
        var none = ShutdownSequence.StateMachine(transportCount: 0)
        #expect(none.begin() == .announce)
        #expect(none.announceStarted() == .drain)
        #expect(none.drainStarted() == .stop)
    }
}
