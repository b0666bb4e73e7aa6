import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderGRPC

/// What both transports share through their ServerContext: one connection limit across
/// transports, refusals of either transport reported to the metrics, one shutdown sequence.
@Suite struct ServerContextTests {
    let clock = ManualClock()

    final class Refusals: CallObserver {
        var refused: [(String?, Status.Code)] = []
        var finished: [(String, Status.Code)] = []
        func callStarted() -> UInt64 { 0 }
        func callFinished(_ method: ServiceMethod, code: Status.Code, startedAt: UInt64) {
            finished.append((method.name, code))
        }
        func callRefused(_ method: ServiceMethod?, code: Status.Code) { refused.append((method?.name, code)) }
    }

    @Test func maxConnectionsIsOneLimitForEveryTransportTogether() throws {
        var limits = ServerLimits()
        limits.maxConnections = 2
        let h = try GRPCDrainTests.Harness(clock: clock, limits: limits)  // one gRPC connection
        let framed = h.stack.connect()
        framed.sendPreface()
        #expect(h.stack.server.connectionCount == 2)
        #expect(h.stack.server.connectionCount(transport: "framed") == 1)
        #expect(h.stack.server.connectionCount(transport: "grpc") == 1)

        // A third connection, whichever transport, is over the limit.
        let refusedFramed = h.stack.connect()
        let frames = try refusedFramed.frames()
        #expect(frames.map(\.status) == [Status(code: .resourceExhausted, message: "connections: limit of 2 reached")])
        #expect(refusedFramed.isClosed)
        let refusedGRPC = InProcessStream()
        h.grpc.accept(refusedGRPC, peer: "127.0.0.1:2")
        #expect(refusedGRPC.isClosed)
        #expect(h.stack.server.connectionCount == 2)
        #expect(h.stack.server.connectionsRefused(transport: "framed") == 1)
        #expect(h.stack.server.connectionsRefused(transport: "grpc") == 1)

        // One closing makes room for either.
        h.stack.transport.closeAll(reason: "test")
        #expect(h.stack.server.connectionCount == 1)
        let again = InProcessStream()
        h.grpc.accept(again, peer: "127.0.0.1:3")
        #expect(!again.isClosed)
        #expect(h.stack.server.connectionCount(transport: "grpc") == 2)
    }

    @Test func grpcRefusalsAreReportedLikeTheFramedTransports() throws {
        let h = try GRPCDrainTests.Harness(clock: clock)
        let observer = Refusals()
        h.stack.service.callObserver = observer
        let unknown = h.borrow("feed", path: "/adloader.v1.NativeAdLoader/Nope")
        #expect(GRPCDrainTests.answered(unknown, in: h.frames()))
        #expect(observer.refused.count == 1)
        #expect(observer.refused.first?.0 == nil)
        #expect(observer.refused.first?.1 == .unimplemented)
        // A served call is reported once, as finished, not as refused.
        let served = h.borrow("feed")
        _ = served
        clock.advance(by: .milliseconds(200))
        _ = h.frames()
        #expect(observer.refused.count == 1)
        #expect(observer.finished.map(\.0) == ["Borrow"])
    }

    @Test func theMethodIsCheckedBeforeTheTokenOnBothTransports() throws {
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(10)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        let stack = try InProcessTransport(
            loaders: [LoaderConfiguration(name: "default")], sources: ["synthetic": source], clock: clock,
            authenticator: CallAuthenticator(tokens: ["t0ken"], requireOnLoopback: true))
        let client = stack.connect()
        client.sendPreface()
        // PROTOCOL.md 5.2 and 11.6: calls in flight, the method, then the token.
        client.start("/adloader.v1.NativeAdLoader/Nope", StatsRequestMessage())
        client.start(MethodName.stats, StatsRequestMessage())
        let codes = try client.frames().map(\.status.code)
        #expect(codes == [.unimplemented, .unauthenticated])

        let grpc = GRPCTransport(
            server: stack.server, clock: clock, scheduler: clock, deferred: ManualDeferredWork(),
            logger: Logger(level: .error))
        #expect(grpc.server === stack.server)
        // The gRPC transport's admission is the same function (ServerContext.admitCall).
        #expect(
            stack.server.admitCall(
                method: "/x/Y", methodIsKnown: false, callsInFlight: 0, authorization: nil, peerIsLocal: false)?.code
                == .unimplemented)
        #expect(
            stack.server.admitCall(
                method: MethodName.stats, methodIsKnown: true, callsInFlight: 0, authorization: nil, peerIsLocal: false)?
                .code == .unauthenticated)
        #expect(
            stack.server.admitCall(
                method: "/x/Y", methodIsKnown: false, callsInFlight: 128, authorization: nil, peerIsLocal: false)?.code
                == .resourceExhausted)
    }
}

/// The gRPC connection's drain, as a state machine.
@Suite struct DrainStateTests {
    @Test func servingThenAwaitingTheAcknowledgementThenAnnounced() {
        var drain = DrainState()
        #expect(drain.state == .serving)
        var acknowledged = drain.pingAcknowledged()
        #expect(!acknowledged, "a PING acknowledgement while serving is not the drain's")
        drain.pingSent()
        #expect(drain.state == .serving, "no PING before the GOAWAY")
        drain.announce()
        #expect(drain.state == .announced)
        drain.pingSent()
        #expect(drain.state == .awaitingPingAcknowledgement)
        drain.announce()
        #expect(drain.state == .awaitingPingAcknowledgement, "announcing again changes nothing")
        acknowledged = drain.pingAcknowledged()
        #expect(acknowledged)
        #expect(drain.state == .announced)
        acknowledged = drain.pingAcknowledged()
        #expect(!acknowledged, "a second acknowledgement is not the drain's")
    }
}
