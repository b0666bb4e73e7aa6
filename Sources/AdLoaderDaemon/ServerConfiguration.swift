public import AdLoaderAdmin
import AdLoaderConfiguration
public import AdLoaderCore
public import AdLoaderGRPC
public import AdLoaderLogging
public import AdLoaderService
public import AdLoaderTLS
import AdLoaderUV

/// Everything the daemon needs to run: listeners, limits, logging, demand sources, loaders.
///
/// Built by ``load(arguments:environment:readFile:)`` from, in increasing priority: the
/// defaults below, a JSON file (`--config` / `ADLOADERD_CONFIG`), environment variables and
/// command-line flags. ``settings`` lists every setting with its flag, variable and default.
public struct ServerConfiguration: Hashable, Sendable {
    /// The documented default TCP port.
    public static let defaultPort = 7411
    /// The default TCP address: loopback only.
    public static let defaultHost = "127.0.0.1"

    /// Where the daemon accepts connections.
    public struct Listeners: Hashable, Sendable {
        /// An IPv4 or IPv6 literal.
        public var host = ServerConfiguration.defaultHost
        /// 0 lets the kernel pick a free port (the daemon prints the one bound).
        public var port = ServerConfiguration.defaultPort
        /// A Unix-socket path also listened on; nil for none.
        public var unixSocket: String? = nil
        /// Permission bits of the Unix socket file.
        public var unixSocketMode: UInt32 = 0o660
        /// The daemon's name among the replicas of a fleet (Stats `instance`, gRPC header
        /// `x-adloader-instance`); nil: the TCP listener's bound `host:port`.
        public var instanceName: String? = nil
        /// The replica index in the top bits of this daemon's lease ids (1...4095), so that a
        /// Return sent to the wrong replica is answered naming the lender; nil: derived from
        /// the instance name (``LeaseReplica/index(forInstance:)``).
        public var replicaIndex: Int? = nil

        public init() {}
    }

    /// The admin HTTP listener (`/metrics`, `/healthz`, `/readyz`, the dashboard).
    public struct Admin: Hashable, Sendable {
        /// The documented port `make run` uses; the setting's default is 0 (off).
        public static let suggestedPort = 7412
        /// An IPv4 or IPv6 literal; loopback by default (metrics name ad units and loaders).
        public var host = ServerConfiguration.defaultHost
        /// 0: no admin listener. Off by default so that several daemons on one machine (tests,
        /// instances) do not compete for one port; `make run` turns it on at 7412.
        public var port = 0
        public var limits = AdminLimits()
        /// How often the dashboard's history takes a sample (it keeps the last hour, at most
        /// 720 samples).
        public var sampleInterval: Duration = .seconds(5)
        /// Pools with their own metric series (and dashboard history), first come first
        /// served; later pools are summed into `ad_unit="_other"` per loader.
        public var maxPoolSeries = 500

        public init() {}
    }

    public var listeners = Listeners()
    public var admin = Admin()

    /// Token auth on both transports (``CallAuthenticator``).
    public struct Auth: Hashable, Sendable {
        /// Accepted `authorization: Bearer <token>` tokens, named `token-1`, `token-2`... in
        /// logs and metrics; empty (and no named tokens or token files): no authentication.
        public var tokens: [String] = []
        /// Accepted tokens by their callers' names (`{"feed-renderer": "..."}`).
        public var namedTokens: [String: String] = [:]
        /// Files holding one accepted token each (its first line), by caller name; read at
        /// start and at every reload.
        public var tokenFiles: [String: String] = [:]
        /// Whether loopback and Unix-socket clients need a token too.
        public var requireOnLoopback = false
        /// Lets the daemon listen on a non-loopback address without tokens.
        public var insecure = false

        public init() {}
    }

    public var auth = Auth()
    /// TLS on the TCP listener (the Unix socket stays cleartext: it is local).
    public var tls = TLSConfiguration()
    public var limits = ServerLimits()
    /// The gRPC transport's HTTP/2 settings and flood bounds.
    public var http2Limits = HTTP2Limits()

    /// ``HTTP2Limits/floodWindowMilliseconds`` as a duration, for the configuration table.
    var http2FloodWindow: Duration {
        get { .milliseconds(http2Limits.floodWindowMilliseconds) }
        set { http2Limits.floodWindowMilliseconds = max(1, newValue.milliseconds) }
    }
    public var logLevel: LogLevel = .info
    /// Shortest time between two warnings of one kind about one demand source (failing by
    /// class, stopped filling); the first is written at once, each later one counts what happened.
    public var logWarningInterval: Duration = .seconds(10)
    /// Demand sources by name, each of a type (see ``DemandSourceConfiguration``); loaders name
    /// theirs in `source`. By default one, `synthetic`.
    public var sources: [String: DemandSourceConfiguration] = ["synthetic": .synthetic()]
    /// The named loaders; by default one, `default`, on the synthetic source.
    public var loaders: [LoaderConfiguration] = [LoaderConfiguration()]
    /// Where app-open counts are kept.
    public var capStore = CapStoreConfiguration()
    /// What a restart keeps (the notice outbox).
    public var poolStore = PoolStoreConfiguration()

    public init() {}

    /// Checks every setting; the error names the first one out of range.
    /// - Throws: ``ConfigError`` naming the setting, e.g. `listeners.port`.
    public func validate() throws(ConfigError) {
        if !(0...65_535).contains(listeners.port) {
            throw ConfigError(field: "listeners.port", message: "must be 0...65535, got \(listeners.port)")
        }
        if !UVTCPHandle.isIPAddress(listeners.host) {
            throw ConfigError(
                field: "listeners.host", message: "must be an IPv4 or IPv6 address, got \"\(listeners.host)\"")
        }
        if !auth.hasTokens, tls.clientAuth != .required, !auth.insecure, !Self.isLoopback(listeners.host) {
            throw ConfigError(
                field: "listeners.host",
                message:
                    "\(listeners.host) is not a loopback address: configure auth.tokens (--auth-tokens, auth.namedTokens, auth.tokenFiles) or TLS client certificates (tls.clientAuth required), or pass --insecure to serve it without authentication"
            )
        }
        if !auth.hasTokens, !auth.insecure, admin.port != 0, !Self.isLoopback(admin.host) {
            throw ConfigError(
                field: "admin.host",
                message:
                    "\(admin.host) is not a loopback address: configure auth tokens (every admin request but /healthz and /readyz then needs one), or pass --insecure to serve the admin listener without authentication"
            )
        }
        do throws(TLSError) {
            try tls.validate()
        } catch {
            throw ConfigError(field: error.field, message: error.message)
        }
        for name in Array(auth.namedTokens.keys) + Array(auth.tokenFiles.keys) where !Self.isCallerName(name) {
            throw ConfigError(
                field: auth.namedTokens[name] != nil ? "auth.namedTokens.\(name)" : "auth.tokenFiles.\(name)",
                message: "a caller name is 1...64 of A-Z a-z 0-9 . _ - (it is a metric label), got \"\(name)\"")
        }
        if let path = listeners.unixSocket, path.isEmpty || path.utf8.count > 107 {
            throw ConfigError(field: "listeners.unixSocket", message: "must be a path of 1...107 bytes")
        }
        if let name = listeners.instanceName,
            name.utf8.count > 255 || !name.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        {
            throw ConfigError(
                field: "listeners.instanceName",
                message:
                    "must be 1...255 visible ASCII characters (it travels as an HTTP/2 header value), got \"\(name)\"")
        }
        if listeners.unixSocketMode > 0o777 {
            throw ConfigError(field: "listeners.unixSocketMode", message: "must be an octal mode 0...0777")
        }
        try limits.validate()
        if !UVTCPHandle.isIPAddress(admin.host) {
            throw ConfigError(field: "admin.host", message: "must be an IPv4 or IPv6 address, got \"\(admin.host)\"")
        }
        if admin.port != 0, admin.port == listeners.port {
            throw ConfigError(field: "admin.port", message: "must differ from listeners.port (\(listeners.port))")
        }
        if logWarningInterval < .milliseconds(100) {
            throw ConfigError(field: "log.warningInterval", message: "must be at least 100ms")
        }
        if admin.sampleInterval < .milliseconds(100) {
            throw ConfigError(field: "admin.sampleInterval", message: "must be at least 100ms")
        }
        for (field, value) in [
            ("requestTimeout", admin.limits.requestTimeout), ("idleTimeout", admin.limits.idleTimeout),
        ]
        where value <= .zero {
            throw ConfigError(field: "admin.\(field)", message: "must be positive")
        }
        try capStore.validate()
        try poolStore.validate()
        if http2Limits.maxConcurrentStreams < 1 || http2Limits.maxHeaderListSize < 1024 {
            throw ConfigError(
                field: "http2", message: "maxConcurrentStreams must be >= 1 and maxHeaderListSize >= 1024")
        }
        for name in sources.keys.sorted() {
            try sources[name]!.validate(field: "sources.\(name)")
        }
        if loaders.isEmpty { throw ConfigError(field: "loaders", message: "at least one loader is needed") }
        var seen: Set<String> = []
        for loader in loaders {
            try loader.validate()
            if !seen.insert(loader.name).inserted {
                throw ConfigError(field: "loaders.\(loader.name)", message: "duplicate loader name")
            }
            guard let source = sources[loader.source] else {
                throw ConfigError(
                    field: "loaders.\(loader.name).source",
                    message:
                        "unknown source \"\(loader.source)\"\(Suggestion.didYouMean(loader.source, among: sources.keys.sorted())) (configured: \(sources.keys.sorted().joined(separator: ", ")))"
                )
            }
            if !source.formats.contains(loader.format) {
                let formats = source.formats.map(\.description)
                let remedy =
                    source.formatKey(loader.format).map {
                        "list what its impressions ask for in sources.\(loader.source).\($0), use a \(formats.joined(separator: " or ")) loader, or a source of another type"
                    } ?? "use a \(formats.joined(separator: " or ")) loader, or a source of another type"
                throw ConfigError(
                    field: "loaders.\(loader.name).format",
                    message:
                        "is \(loader.format), but its source \"\(loader.source)\" (type \(source.type)) delivers only \(formats.joined(separator: ", ")) ads: this loader could never be served (\(remedy))"
                )
            }
        }
    }

    /// Whether `name` may name a token's callers: 1...64 of `A-Z a-z 0-9 . _ -`.
    static func isCallerName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                $0.isASCIILetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            }
    }

    /// Whether `host` (an IP literal) is a loopback address.
    static func isLoopback(_ host: String) -> Bool {
        host.hasPrefix("127.") || host == "::1" || host.hasPrefix("::ffff:127.")
    }
}
