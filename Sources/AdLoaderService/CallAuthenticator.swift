public import AdLoaderWire

/// Token auth for every transport: which calls must carry `authorization: Bearer <token>`
/// metadata, and whether the one they carry is valid.
///
/// With no tokens configured nothing is checked (the daemon then listens only on loopback or
/// a Unix socket, unless told it may run insecure). With tokens, calls from other machines need
/// one; calls over loopback or a Unix socket need one only when ``requireOnLoopback`` is set.
/// Tokens are compared in constant time (every configured token, every byte).
public struct CallAuthenticator: Sendable {
    /// One accepted token and the name logs and metrics give its callers.
    public struct Token: Hashable, Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The accepted tokens, as bytes.
    private let tokens: [[UInt8]]
    /// Each token's name, by the index ``identify(_:peerIsLocal:)`` returns.
    public let names: [String]
    /// Whether local peers (loopback, Unix socket) need a token too.
    public let requireOnLoopback: Bool

    /// - Parameters:
    ///   - tokens: accepted bearer tokens, named `token-1`, `token-2`... by position; empty
    ///     turns authentication off.
    ///   - requireOnLoopback: whether local peers need a token too.
    public init(tokens: [String] = [], requireOnLoopback: Bool = false) {
        self.init(
            named: tokens.enumerated().map { Token(name: "token-\($0.offset + 1)", value: $0.element) },
            requireOnLoopback: requireOnLoopback)
    }

    /// - Parameters:
    ///   - named: accepted bearer tokens with their callers' names; empty values are ignored.
    ///   - requireOnLoopback: whether local peers need a token too.
    public init(named: [Token], requireOnLoopback: Bool = false) {
        let kept = named.filter { !$0.value.isEmpty }
        self.tokens = kept.map { Array($0.value.utf8) }
        self.names = kept.map(\.name)
        self.requireOnLoopback = requireOnLoopback
    }

    /// Whether any token is configured.
    public var isEnabled: Bool { !tokens.isEmpty }

    /// The status refusing a call, or nil to serve it.
    /// - Parameters:
    ///   - authorization: the call's `authorization` metadata, if any.
    ///   - peerIsLocal: the connection comes over loopback or a Unix socket.
    public func check(_ authorization: String?, peerIsLocal: Bool) -> Status? {
        identify(authorization, peerIsLocal: peerIsLocal).refusal
    }

    /// The status refusing a call (nil to serve it) and, when a valid token was presented, its
    /// index in ``names``.
    public func identify(_ authorization: String?, peerIsLocal: Bool) -> (refusal: Status?, caller: Int?) {
        guard isEnabled, !peerIsLocal || requireOnLoopback else { return (nil, nil) }
        guard let authorization else {
            return (Status(code: .unauthenticated, message: "authorization: a Bearer token is required"), nil)
        }
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        guard bytes.count > scheme.count,
            zip(bytes.prefix(scheme.count), scheme).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
        else {
            return (Status(code: .unauthenticated, message: "authorization: expected \"Bearer <token>\""), nil)
        }
        let presented = bytes[scheme.count...]
        // Every token compared, every byte: the time does not tell which one matched.
        var matched = -1
        for (index, token) in tokens.enumerated() {
            let equal = Self.constantTimeEqual(presented, token[...])
            if equal && matched < 0 { matched = index }
        }
        return matched >= 0
            ? (nil, matched) : (Status(code: .unauthenticated, message: "authorization: invalid token"), nil)
    }

    /// Compares without an early exit: the time depends on the lengths only.
    static func constantTimeEqual(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        var difference = UInt64(a.count ^ b.count)
        let count = max(a.count, b.count)
        for i in 0..<count {
            let x = i < a.count ? a[a.startIndex + i] : 0
            let y = i < b.count ? b[b.startIndex + i] : 0
            difference |= UInt64(x ^ y)
        }
        return difference == 0
    }

    /// Whether a peer as the listeners name it ("127.0.0.1:5000", "[::1]:5000", "unix") is on
    /// this machine.
    public static func isLocal(peer: String) -> Bool {
        if peer == "unix" { return true }
        if peer.hasPrefix("[::1]:") || peer.hasPrefix("[::ffff:127.") { return true }
        return peer.hasPrefix("127.")
    }
}
