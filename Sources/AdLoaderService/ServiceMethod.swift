import AdLoaderWire

/// The methods of `adloader.v1.NativeAdLoader`, as a small closed set (metrics label them by
/// ``name``; an index keeps per-method tables flat).
public enum ServiceMethod: Int, CaseIterable, Hashable, Sendable {
    case prefetch, borrow, returnLease, stats, watch, appOpen, setLoaderEnabled, reload

    /// The short method name, e.g. "Borrow" (the last part of ``fullName``).
    public var name: String {
        switch self {
        case .prefetch: "Prefetch"
        case .borrow: "Borrow"
        case .returnLease: "Return"
        case .stats: "Stats"
        case .watch: "Watch"
        case .appOpen: "AppOpen"
        case .setLoaderEnabled: "SetLoaderEnabled"
        case .reload: "Reload"
        }
    }

    /// The full gRPC method name, e.g. ``MethodName/borrow``.
    public var fullName: String {
        switch self {
        case .prefetch: MethodName.prefetch
        case .borrow: MethodName.borrow
        case .returnLease: MethodName.returnLease
        case .stats: MethodName.stats
        case .watch: MethodName.watch
        case .appOpen: MethodName.appOpen
        case .setLoaderEnabled: MethodName.setLoaderEnabled
        case .reload: MethodName.reload
        }
    }
}

extension ServiceMethod {
    /// The method named by a full gRPC method name; nil for one this service does not serve.
    public init?(fullName: String) {
        guard let method = ServiceMethod.allCases.first(where: { $0.fullName == fullName }) else { return nil }
        self = method
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
        }
    }
}
