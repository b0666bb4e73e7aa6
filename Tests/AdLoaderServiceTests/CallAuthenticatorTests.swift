import AdLoaderWire
import Testing

@testable import AdLoaderService

@Suite struct CallAuthenticatorTests {
    let required = CallAuthenticator(tokens: ["alpha", "beta-token"], requireOnLoopback: true)

    @Test func withoutTokensEveryCallIsServed() {
        let open = CallAuthenticator()
        #expect(!open.isEnabled)
        #expect(open.check(nil, peerIsLocal: false) == nil)
        #expect(CallAuthenticator(tokens: [""]).check(nil, peerIsLocal: false) == nil)
    }

    @Test(arguments: ["Bearer alpha", "bearer beta-token", "BEARER alpha"])
    func validTokensAreServed(_ value: String) {
        #expect(required.check(value, peerIsLocal: false) == nil)
    }

    @Test(
        arguments: [
            nil, "", "Bearer", "Bearer ", "alpha", "Basic alpha", "Bearer alph", "Bearer alphaa", "Bearer  alpha",
            "Bearer beta", "Bearer " + String(repeating: "x", count: 100_000), "Bearer alpha\u{0}",
        ] as [String?])
    func anythingElseIsUnauthenticated(_ value: String?) {
        #expect(required.check(value, peerIsLocal: false)?.code == .unauthenticated)
    }

    @Test func localPeersNeedNoTokenUnlessRequired() {
        let remoteOnly = CallAuthenticator(tokens: ["alpha"])
        #expect(remoteOnly.check(nil, peerIsLocal: true) == nil)
        #expect(remoteOnly.check(nil, peerIsLocal: false)?.code == .unauthenticated)
        #expect(required.check(nil, peerIsLocal: true)?.code == .unauthenticated)
    }

    @Test(arguments: [
        ("unix", true), ("127.0.0.1:5000", true), ("127.9.9.9:1", true), ("[::1]:7411", true),
        ("10.0.0.1:5000", false), ("[2001:db8::1]:80", false), ("1270.0.0.1:1", false),
    ])
    func peersOnThisMachine(_ peer: String, _ local: Bool) {
        #expect(CallAuthenticator.isLocal(peer: peer) == local)
    }

    @Test func aValidTokenNamesItsCaller() {
        let named = CallAuthenticator(
            named: [
                .init(name: "feed", value: "f-1"), .init(name: "ops", value: "o-1"), .init(name: "feed", value: "f-2"),
                .init(name: "empty", value: ""),
            ],
            requireOnLoopback: true)
        #expect(named.names == ["feed", "ops", "feed"])
        #expect(named.identify("Bearer o-1", peerIsLocal: false).caller == 1)
        #expect(named.identify("Bearer f-2", peerIsLocal: true).caller == 2)
        let refused = named.identify("Bearer f-3", peerIsLocal: false)
        #expect(refused.caller == nil && refused.refusal?.code == .unauthenticated)
        #expect(CallAuthenticator(tokens: ["a", "b"]).names == ["token-1", "token-2"])
        // Local peers that need no token are served without a caller.
        #expect(CallAuthenticator(named: [.init(name: "x", value: "y")]).identify(nil, peerIsLocal: true) == (nil, nil))
    }

    @Test func constantTimeComparisonIsEquality() {
        #expect(CallAuthenticator.constantTimeEqual(Array("abc".utf8)[...], Array("abc".utf8)[...]))
        #expect(!CallAuthenticator.constantTimeEqual(Array("abc".utf8)[...], Array("abd".utf8)[...]))
        #expect(!CallAuthenticator.constantTimeEqual(Array("abc".utf8)[...], Array("ab".utf8)[...]))
        #expect(CallAuthenticator.constantTimeEqual([][...], [][...]))
    }
}
