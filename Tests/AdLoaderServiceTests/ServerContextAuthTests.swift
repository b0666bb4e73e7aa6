import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderService

/// The admission step's tokens: replaced by a reload (a removed token's next call is
/// UNAUTHENTICATED, on any connection), and calls counted by the token's name across reloads.
@Suite struct ServerContextAuthTests {
    let clock = ManualClock()

    private func server(_ tokens: [CallAuthenticator.Token]) throws -> ServerContext {
        let source = try SyntheticSource(configuration: SyntheticSource.Configuration(), clock: clock, scheduler: clock)
        let loader = try NativeAdvertisementLoader(
            loaders: [LoaderConfiguration(name: "default")], sources: ["synthetic": source], clock: clock,
            scheduler: clock)
        let service = AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error),
            authenticator: CallAuthenticator(named: tokens, requireOnLoopback: true))
        return ServerContext(service: service, limits: ServerLimits())
    }

    private func admit(_ server: ServerContext, _ token: String?) -> Status.Code? {
        server.admitCall(
            method: "/adloader.v1.NativeAdLoader/Stats", methodIsKnown: true, callsInFlight: 0,
            authorization: token.map { "Bearer \($0)" }, peerIsLocal: true)?.code
    }

    @Test func aReloadAddsAndRemovesTokensAndKeepsCountsByName() throws {
        let server = try server([.init(name: "feed", value: "f-1"), .init(name: "ops", value: "o-1")])
        #expect(admit(server, "f-1") == nil)
        #expect(admit(server, "f-1") == nil)
        #expect(admit(server, "o-1") == nil)
        #expect(admit(server, nil) == .unauthenticated)
        #expect(server.callsByName == ["feed": 2, "ops": 1])

        // Rotation: feed gets a new token (the old one stays for now), ops is removed.
        server.replaceAuthenticator(
            CallAuthenticator(
                named: [.init(name: "feed", value: "f-1"), .init(name: "feed", value: "f-2")], requireOnLoopback: true))
        #expect(admit(server, "o-1") == .unauthenticated)
        #expect(admit(server, "f-2") == nil)
        #expect(admit(server, "f-1") == nil)
        #expect(server.callsByName == ["feed": 4, "ops": 1])

        server.replaceAuthenticator(
            CallAuthenticator(named: [.init(name: "feed", value: "f-2")], requireOnLoopback: true))
        #expect(admit(server, "f-1") == .unauthenticated)
        #expect(admit(server, "f-2") == nil)
        #expect(server.callsByName == ["feed": 5, "ops": 1])
    }
}
