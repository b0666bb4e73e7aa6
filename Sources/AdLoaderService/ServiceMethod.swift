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

    /// What a method is: the entries of the one table, ``descriptors``.
    struct Descriptor: Sendable {
        let name: String
        let fullName: String
        let kind: Kind
        /// Decodes the method's request message where its bytes are.
        let decode: @Sendable (UnsafeRawBufferPointer) throws(Status) -> ServiceRequest

        init(
            _ name: String, _ fullName: String, _ kind: Kind = .unary,
            decode: @escaping @Sendable (UnsafeRawBufferPointer) throws(Status) -> ServiceRequest
        ) {
            self.name = name
            self.fullName = fullName
            self.kind = kind
            self.decode = decode
        }
    }

    /// The position in ``allCases``: an index for per-method tables. A method is only this
    /// index, so passing one around (every call's metrics) copies an integer.
    public let rawValue: Int

    init(rawValue: Int) { self.rawValue = rawValue }

    var descriptor: Descriptor { Self.descriptors[rawValue] }
    /// The short method name, e.g. "Borrow" (the last part of ``fullName``).
    public var name: String { descriptor.name }
    /// The full gRPC method name, e.g. ``MethodName/borrow``: the same string storage the
    /// decoders intern, so comparisons by identity hold.
    public var fullName: String { descriptor.fullName }
    public var kind: Kind { descriptor.kind }
    /// Decodes this method's request message where its bytes are.
    func decode(_ bytes: UnsafeRawBufferPointer) throws(Status) -> ServiceRequest { try descriptor.decode(bytes) }

    public var description: String { name }

    // MARK: The methods: one descriptor each, in the proto's order

    static let descriptors: [Descriptor] = [
        Descriptor("Prefetch", MethodName.prefetch) { (bytes) throws(Status) in .prefetch(try decoded(bytes)) },
        Descriptor("Borrow", MethodName.borrow) { (bytes) throws(Status) in .borrow(try decoded(bytes)) },
        Descriptor("Return", MethodName.returnLease) { (bytes) throws(Status) in .returnLease(try decoded(bytes)) },
        Descriptor("Stats", MethodName.stats) { (bytes) throws(Status) in .stats(try decoded(bytes)) },
        Descriptor("Watch", MethodName.watch, .serverStreaming) { (bytes) throws(Status) in .watch(try decoded(bytes))
        },
        Descriptor("AppOpen", MethodName.appOpen) { (bytes) throws(Status) in .appOpen(try decoded(bytes)) },
        Descriptor("SetLoaderEnabled", MethodName.setLoaderEnabled) { (bytes) throws(Status) in
            .setLoaderEnabled(try decoded(bytes))
        },
        Descriptor("Reload", MethodName.reload) { (bytes) throws(Status) in .reload(try decoded(bytes)) },
        Descriptor("ServerInfo", MethodName.serverInfo) { (bytes) throws(Status) in .serverInfo(try decoded(bytes)) },
        Descriptor("Plan", MethodName.plan) { (bytes) throws(Status) in .plan(try decoded(bytes)) },
    ]

    public static var prefetch: ServiceMethod { ServiceMethod(rawValue: 0) }
    public static var borrow: ServiceMethod { ServiceMethod(rawValue: 1) }
    public static var returnLease: ServiceMethod { ServiceMethod(rawValue: 2) }
    public static var stats: ServiceMethod { ServiceMethod(rawValue: 3) }
    public static var watch: ServiceMethod { ServiceMethod(rawValue: 4) }
    public static var appOpen: ServiceMethod { ServiceMethod(rawValue: 5) }
    public static var setLoaderEnabled: ServiceMethod { ServiceMethod(rawValue: 6) }
    public static var reload: ServiceMethod { ServiceMethod(rawValue: 7) }
    public static var serverInfo: ServiceMethod { ServiceMethod(rawValue: 8) }
    public static var plan: ServiceMethod { ServiceMethod(rawValue: 9) }

    /// Every method, in the proto's declaration order (``rawValue`` is the position).
    public static let allCases: [ServiceMethod] = descriptors.indices.map { ServiceMethod(rawValue: $0) }

    /// The method named by a full gRPC method name; nil for one this service does not serve.
    public init?(fullName: String) {
        let table = Self.descriptors
        for index in table.indices where table[index].fullName == fullName {
            self.init(rawValue: index)
            return
        }
        return nil
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
        case .plan: .plan
        }
    }
}
