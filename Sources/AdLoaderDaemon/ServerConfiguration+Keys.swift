import AdLoaderCore
import AdLoaderLogging
import AdLoaderService

/// The configuration tables: one per section, one row per setting (key, parse, default, help,
/// flag). The JSON file, the environment variables, the flags and `--help` all come from them.
extension ServerConfiguration {
    /// `listeners`: where the daemon accepts connections.
    static let listenerKeys = ConfigTable<ServerConfiguration>(
        section: "listeners", defaults: ServerConfiguration(),
        keys: [
            .value(
                "host", \.listeners.host, .string, flag: "--host", "TCP address to listen on (IPv4 or IPv6 literal)"),
            .value(
                "port", \.listeners.port, .int(in: 0...65_535), flag: "--port",
                "TCP port; 0 picks a free one (the bound port is printed)"),
            .value(
                "unixSocket", \.listeners.unixSocket, .optional(.string, none: "none", emptyIsNone: true),
                flag: "--unix-socket",
                "also listen on this Unix-socket path (a stale socket file there is replaced); empty for none"),
            .value(
                "unixSocketMode", \.listeners.unixSocketMode, .mode, flag: "--unix-socket-mode",
                "permissions of the Unix-socket file, octal"),
        ])

    /// `auth`: token auth on both transports.
    static let authKeys = ConfigTable<ServerConfiguration>(
        section: "auth", defaults: ServerConfiguration(),
        keys: [
            .value(
                "tokens", \.auth.tokens, .strings, flag: "--auth-tokens",
                "accepted bearer tokens (calls send `authorization: Bearer <token>`); prefer the file or ADLOADERD_AUTH_TOKENS to a flag"),
            .value(
                "requireOnLoopback", \.auth.requireOnLoopback, .bool, flag: "--auth-require-on-loopback",
                "loopback and Unix-socket clients need a token too (else only other hosts do)"),
            .value(
                "insecure", \.auth.insecure, .bool, flag: "--insecure",
                "allow listening on a non-loopback address without tokens"),
        ])

    /// `http2`: the gRPC transport's HTTP/2 settings and flood bounds.
    static let http2Keys = ConfigTable<ServerConfiguration>(
        section: "http2", defaults: ServerConfiguration(),
        keys: [
            .value(
                "maxConcurrentStreams", \.http2Limits.maxConcurrentStreams, .int(in: 1...1_000_000),
                flag: "--http2-max-concurrent-streams", "SETTINGS_MAX_CONCURRENT_STREAMS; more streams are refused"),
            .value(
                "maxHeaderListSize", \.http2Limits.maxHeaderListSize, .size, flag: "--http2-max-header-list-size",
                "SETTINGS_MAX_HEADER_LIST_SIZE, enforced; bigger request headers: RESOURCE_EXHAUSTED"),
            .value(
                "maxResetsPerWindow", \.http2Limits.maxResetsPerWindow, .int(in: 1...1_000_000),
                flag: "--http2-max-resets", "RST_STREAMs a client may send per flood window; more: GOAWAY ENHANCE_YOUR_CALM"),
            .value(
                "maxControlFramesPerWindow", \.http2Limits.maxControlFramesPerWindow, .int(in: 1...1_000_000),
                flag: "--http2-max-control-frames",
                "SETTINGS, PING, PRIORITY and empty frames a client may send per flood window; more: GOAWAY ENHANCE_YOUR_CALM"),
            .value(
                "floodWindow", \.http2FloodWindow, .duration, flag: "--http2-flood-window",
                "the window the two counts above count over"),
        ])

    /// `log`: what is logged.
    static let logKeys = ConfigTable<ServerConfiguration>(
        section: "log", defaults: ServerConfiguration(),
        keys: [
            .value(
                "level", \.logLevel, .logLevel, flag: "--log-level",
                "debug, info, warning or error; logs are JSON lines on stderr")
        ])

    /// `limits`: ``ServerLimits``, checked where bytes arrive.
    static let limitKeys = ConfigTable<ServerConfiguration>(
        section: "limits", defaults: ServerConfiguration(),
        keys: [
            .value(
                "maxMessageSize", \.limits.maxMessageSize, .size, flag: "--max-message-size",
                "largest message accepted (bigger: RESOURCE_EXHAUSTED, then close) and largest Stats answer sent (bigger: RESOURCE_EXHAUSTED)"
            ),
            .value(
                "maxConnections", \.limits.maxConnections, .int(in: 1...1_000_000), flag: "--max-connections",
                "open connections, all listeners; more are closed at once"),
            .value(
                "maxCallsInFlightPerConnection", \.limits.maxCallsInFlightPerConnection, .int(in: 1...1_000_000),
                flag: "--max-calls-in-flight",
                "open calls per connection (incl. parked borrows, watches); more: RESOURCE_EXHAUSTED"),
            .value(
                "maxParkedBorrows", \.limits.maxParkedBorrows, .int(in: 0...10_000_000), flag: "--max-parked-borrows",
                "borrows waiting for an ad, whole server; more: RESOURCE_EXHAUSTED"),
            .value(
                "idleTimeout", \.limits.idleTimeout, .duration, flag: "--idle-timeout",
                "close a connection with no open call that sends nothing this long"),
            .value(
                "partialFrameTimeout", \.limits.partialFrameTimeout, .duration, flag: "--partial-frame-timeout",
                "close a connection holding an incomplete frame or preface this long with no frame completing"),
            .value(
                "maxUnsentOutputPerConnection", \.limits.maxUnsentOutputPerConnection, .size,
                flag: "--max-unsent-output",
                "unsent answers per connection above which its requests stop being read until half drained (closed at 2x this + max message size)"
            ),
            .value(
                "maxIdentifierLength", \.limits.maxIdentifierLength, .int(in: 1...65_536),
                flag: "--max-identifier-length",
                "longest ad_unit_id, loader or slot_key in bytes; longer: INVALID_ARGUMENT naming the field, nothing created"
            ),
            .value(
                "shutdownGracePeriod", \.limits.shutdownGracePeriod, .duration, flag: "--shutdown-grace-period",
                "on SIGTERM/SIGINT, the longest wait for clients to close (new calls get UNAVAILABLE meanwhile)"),
        ])

    /// `loaders.NAME`: one loader; only the JSON file configures loaders. Ranges are checked by
    /// ``LoaderConfiguration/validate()`` once every setting is in.
    static let loaderKeys = ConfigTable<LoaderConfiguration>(
        section: "loaders.NAME", defaults: LoaderConfiguration(),
        keys: [
            .value("source", \.source, .string, "demand source name"),
            .value(
                "format", \.format, .choice(AdFormat.allCases.map { ($0.name, $0) }),
                "native, interstitial, rewarded or appOpen"),
            .value("keywords", \.keywords, .strings, "array of strings"),
            .value("contentURL", \.contentURL, .optional(.string, none: "null"), "string or null"),
            .value("nonPersonalized", \.nonPersonalized, .bool, "boolean"),
            .value("targeting", \.targeting, .stringMap, "object of strings"),
            .value("numberOfAdvertisements", \.numberOfAdvertisements, .int(), "ads per upstream request, 1...5"),
            .value(
                "sizing", \.sizing, .choice(PoolSizing.allCases.map { ($0.name, $0) }),
                "demand (target follows the borrow rate) or fixed (target = maximumRetainedAdvertisements)"),
            .value(
                "maximumRetainedAdvertisements", \.maximumRetainedAdvertisements, .int(),
                "memory bound per pool: loaded + in flight (with sizing fixed, also the target)"),
            .value("lifetime", \.lifetime, .duration, "duration an ad stays valid"),
            .value("sweepInterval", \.sweepInterval, .duration, "duration between expiry sweeps"),
            .value("showCountThreshold", \.showCountThreshold, .int(), "times one ad may be shown, >= 1"),
            .value(
                "leaseTimeout", \.leaseTimeout, .duration,
                "unreturned leases reclaimed after (never after the ad's expiry; a REUSED borrow renews)"),
            .value(
                "minimumRemainingLife", \.minimumRemainingLife, .optional(.duration, none: "null"),
                "least life an ad must have left to be lent; null = leaseTimeout; below lifetime"),
            .value(
                "maximumConcurrentRequests", \.maximumConcurrentRequests, .int(),
                "upstream requests in flight per pool, >= 1"),
            .value("idleTimeout", \.idleTimeout, .duration, "no Borrow/Prefetch for this long: no automatic top-ups"),
            .value(
                "poolRemovalTimeout", \.poolRemovalTimeout, .duration,
                "an idle pool holding nothing is removed after this long without demand"),
            .value("maximumBorrowWait", \.maximumBorrowWait, .duration, "longest wait a Borrow may ask for"),
            .value(
                "maximumPools", \.maximumPools, .int(),
                "ad units with a pool, 1...1000000; a new one beyond: RESOURCE_EXHAUSTED"),
            .value("enabled", \.enabled, .bool, "boolean"),
            .value("retry.delay", \.retry.delay, .duration, "first retry delay"),
            .value("retry.multiplier", \.retry.multiplier, .double, "growth per retry, >= 1"),
            .value("retry.maximumDelay", \.retry.maximumDelay, .duration, "cap on the delay"),
            .value("retry.jitter", \.retry.jitter, .double, "random spread, 0...1"),
            .value("retry.maximumCount", \.retry.maximumCount, .int(), "automatic retries in a row"),
            .value("retry.probeInterval", \.retry.probeInterval, .duration, "probe period while unreachable"),
        ])

    /// Every setting that has a flag (and so an environment variable), in `--help` order: the
    /// sections' and those of each source type in `sourceTypes`.
    static func settings(sourceTypes: DemandSourceRegistry) -> [ConfigSetting] {
        (listenerKeys.settings(at: \.self) + authKeys.settings(at: \.self) + logKeys.settings(at: \.self)
            + limitKeys.settings(at: \.self) + http2Keys.settings(at: \.self))
            .filter { $0.flag != nil } + sourceTypes.flagSettings
    }

    /// Every setting that has a flag (and so an environment variable), in `--help` order.
    public static let settings = settings(sourceTypes: .standard)

    /// The top-level sections whose keys are plain settings.
    static let scalarSections = [listenerKeys, authKeys, logKeys, limitKeys, http2Keys]
}
