import AdLoaderWire

/// One method of `adloader.v1.NativeAdLoader`: its names, its shape and how its request
/// decodes. ``allCases`` is the one list of methods: decoding (``ServiceRequest``), routing
/// (the gRPC transport's paths), metrics labels (an index keeps per-method tables flat) and
/// the tests that hold the proto's service, reflection and the conformance suite to it all
/// derive from it.
///
/// Adding a call: its messages (AdLoaderWire), a ``ServiceRequest`` case, one descriptor
/// here and its handler in ``AdLoaderService``; no transport changes.
public struct ServiceMethod: Hashable, Sendable, CustomStringConvertible {
    /// How many messages each side sends.
    public enum Kind: Hashable, Sendable {
        /// One request, one answer.
        case unary
        /// One request, a stream of answers, then a status.
        case serverStreaming
    }

    /// The position in ``allCases``: an index for per-method tables.
    public let rawValue: Int
    /// The short method name, e.g. "Borrow" (the last part of ``fullName``).
    public let name: String
    /// The full gRPC method name, e.g. ``MethodName/borrow``: the same string storage the
    /// decoders intern, so comparisons by identity hold.
    public let fullName: String
    public let kind: Kind
    /// Decodes the method's request message where its bytes are.
    let decode: @Sendable (UnsafeRawBufferPointer) throws(Status) -> ServiceRequest

    init(
        _ rawValue: Int, _ name: String, _ fullName: String, _ kind: Kind = .unary,
        decode: @escaping @Sendable (UnsafeRawBufferPointer) throws(Status) -> ServiceRequest
    ) {
        self.rawValue = rawValue
        self.name = name
        self.fullName = fullName
        self.kind = kind
        self.decode = decode
    }

    public static func == (a: ServiceMethod, b: ServiceMethod) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    public var description: String { name }

    // MARK: The methods

    public static let prefetch = ServiceMethod(0, "Prefetch", MethodName.prefetch) { (bytes) throws(Status) in .prefetch(try decoded(bytes)) }
    public static let borrow = ServiceMethod(1, "Borrow", MethodName.borrow) { (bytes) throws(Status) in .borrow(try decoded(bytes)) }
    public static let returnLease = ServiceMethod(2, "Return", MethodName.returnLease) { (bytes) throws(Status) in
        .returnLease(try decoded(bytes))
    }
    public static let stats = ServiceMethod(3, "Stats", MethodName.stats) { (bytes) throws(Status) in .stats(try decoded(bytes)) }
    public static let watch = ServiceMethod(4, "Watch", MethodName.watch, .serverStreaming) { (bytes) throws(Status) in .watch(try decoded(bytes)) }
    public static let appOpen = ServiceMethod(5, "AppOpen", MethodName.appOpen) { (bytes) throws(Status) in .appOpen(try decoded(bytes)) }
    public static let setLoaderEnabled = ServiceMethod(6, "SetLoaderEnabled", MethodName.setLoaderEnabled) { (bytes) throws(Status) in
        .setLoaderEnabled(try decoded(bytes))
    }
    public static let reload = ServiceMethod(7, "Reload", MethodName.reload) { (bytes) throws(Status) in .reload(try decoded(bytes)) }
    public static let serverInfo = ServiceMethod(8, "ServerInfo", MethodName.serverInfo) { (bytes) throws(Status) in
        .serverInfo(try decoded(bytes))
    }

    /// Every method, in the proto's declaration order (``rawValue`` is the position).
    public static let allCases: [ServiceMethod] = [
        prefetch, borrow, returnLease, stats, watch, appOpen, setLoaderEnabled, reload, serverInfo,
    ]

    /// The method named by a full gRPC method name; nil for one this service does not serve.
    public init?(fullName: String) {
        guard let method = Self.allCases.first(where: { $0.fullName == fullName }) else { return nil }
        self = method
    }

    private static func decoded<M: WireMessage>(_ bytes: UnsafeRawBufferPointer) throws(Status) -> M {
        do throws(FrameError) {
            return try M(decoding: bytes)
        } catch {
            throw error.status
        }
    }
}

extension ServiceRequest {
    /// The method of this request.
    public var method: ServiceMethod {
        switch self {
        case .prefetch: .prefetch
        case .borrow: .borrow
        case .returnLease: .returnLease
        case .stats: .stats
        case .watch: .watch
        case .appOpen: .appOpen
        case .setLoaderEnabled: .setLoaderEnabled
        case .reload: .reload
        case .serverInfo: .serverInfo
        }
    }
}
