import AdLoaderConfiguration
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
            .value(
                "instanceName", \.listeners.instanceName, .optional(.string, none: "host:port", emptyIsNone: true),
                flag: "--instance-name",
                "this daemon's name among replicas: in Stats (instance) and every gRPC response's x-adloader-instance header; default the bound host:port"
            ),
            .value(
                "replicaIndex", \.listeners.replicaIndex,
                .optional(.int(in: 1...LeaseReplica.maximum), none: "from the instance name"),
                flag: "--replica-index",
                "1...4095, carried in the top 12 bits of every lease id so a Return sent to another replica is answered naming this one; default derived from instanceName"
            ),
        ])

    /// `admin`: the admin HTTP listener.
    static let adminKeys = ConfigTable<ServerConfiguration>(
        section: "admin", defaults: ServerConfiguration(),
        keys: [
            .value(
                "host", \.admin.host, .string, flag: "--admin-host",
                "admin HTTP address (IPv4 or IPv6 literal): /metrics, /healthz, /readyz, dashboard at /"),
            .value(
                "port", \.admin.port, .int(in: 0...65_535), flag: "--admin-port",
                "admin HTTP port; 0 turns the admin listener off (make run uses 7412)"),
            .value(
                "maxConnections", \.admin.limits.maxConnections, .int(in: 1...10_000), flag: "--admin-max-connections",
                "open admin connections; more are closed at once"),
            .value(
                "maxRequestSize", \.admin.limits.maxRequestHeadBytes, .size, flag: "--admin-max-request-size",
                "request line + headers in bytes; more: 431, then close"),
            .value(
                "maxHeaders", \.admin.limits.maxHeaderCount, .int(in: 1...1_000), flag: "--admin-max-headers",
                "header lines per request; more: 431, then close"),
            .value(
                "requestTimeout", \.admin.limits.requestTimeout, .duration, flag: "--admin-request-timeout",
                "from a request's first byte to its last header; slower: 408, then close"),
            .value(
                "idleTimeout", \.admin.limits.idleTimeout, .duration, flag: "--admin-idle-timeout",
                "close an admin connection idle between requests this long"),
            .value(
                "sampleInterval", \.admin.sampleInterval, .duration, flag: "--admin-sample-interval",
                "dashboard history period (the last hour is kept, at most 720 samples)"),
            .value(
                "maxPoolSeries", \.admin.maxPoolSeries, .int(in: 0...1_000_000), flag: "--admin-max-pool-series",
                "pools with their own metric series, first come; later ones are summed as ad_unit=\"_other\""),
        ])

    /// `tls`: TLS on the TCP listener.
    static let tlsKeys = ConfigTable<ServerConfiguration>(
        section: "tls", defaults: ServerConfiguration(),
        keys: [
            .value(
                "certificateFile", \.tls.certificateFile, .optional(.string, none: "none (TLS off)", emptyIsNone: true),
                flag: "--tls-cert",
                "PEM certificate chain: the TCP listener then speaks TLS only (1.2 minimum, 1.3 preferred; ALPN h2 for gRPC); the Unix socket stays cleartext; re-read at every reload"
            ),
            .value(
                "keyFile", \.tls.keyFile, .optional(.string, none: "none", emptyIsNone: true), flag: "--tls-key",
                "PEM private key of tls.certificateFile; re-read at every reload"),
            .value(
                "clientCAFile", \.tls.clientCAFile, .optional(.string, none: "none", emptyIsNone: true),
                flag: "--tls-client-ca",
                "PEM CA certificates client certificates must chain to (mutual TLS); re-read at every reload"),
            .value(
                "clientAuth", \.tls.clientAuth, .choice(), flag: "--tls-client-auth",
                "client certificates: none, optional (checked when sent) or required (a client without one is refused at the handshake); the subject is the caller in logs and adloader_tls_handshakes_by_caller_total"
            ),
            .value(
                "handshakeTimeout", \.tls.handshakeTimeout, .duration, flag: "--tls-handshake-timeout",
                "from accept to the end of the TLS handshake; slower clients are closed"),
        ])

    /// `auth`: token auth on both transports.
    static let authKeys = ConfigTable<ServerConfiguration>(
        section: "auth", defaults: ServerConfiguration(),
        keys: [
            .value(
                "tokens", \.auth.tokens, .strings, flag: "--auth-tokens",
                "accepted bearer tokens (calls send `authorization: Bearer <token>`), named token-1, token-2... in logs and metrics; prefer the file or ADLOADERD_AUTH_TOKENS to a flag; reloadable"
            ),
            .value(
                "namedTokens", \.auth.namedTokens, .stringMap,
                "accepted tokens by caller name ({\"feed-renderer\": \"...\"}): the name is the caller in logs and adloader_calls_by_caller_total; reloadable"
            ),
            .value(
                "tokenFiles", \.auth.tokenFiles, .stringMap,
                "files holding a token each (first line), by caller name ({\"ops\": \"/etc/adloaderd/ops.token\"}); re-read at every reload (SIGHUP, Reload): rotate by editing the file"
            ),
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
                "SETTINGS_MAX_HEADER_LIST_SIZE, enforced; bigger request headers: RESOURCE_EXHAUSTED (over twice it: the stream is reset)"
            ),
            .value(
                "maxResetsPerWindow", \.http2Limits.maxResetsPerWindow, .int(in: 1...1_000_000),
                flag: "--http2-max-resets",
                "RST_STREAMs a client may send per flood window, and (counted apart) resets the server sends for malformed frames; more: GOAWAY ENHANCE_YOUR_CALM"
            ),
            .value(
                "maxControlFramesPerWindow", \.http2Limits.maxControlFramesPerWindow, .int(in: 1...1_000_000),
                flag: "--http2-max-control-frames",
                "SETTINGS, PING, PRIORITY and empty frames a client may send per flood window; more: GOAWAY ENHANCE_YOUR_CALM"
            ),
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
                "debug, info, warning or error; logs are JSON lines on stderr"),
            .value(
                "warningInterval", \.logWarningInterval, .duration, flag: "--log-warning-interval",
                "shortest time between two warnings of one kind about one demand source (failing, by class; stopped filling): the first at once, each later one counts the failures since"
            ),
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
                "maximumAds", \.limits.maximumAds, .int(in: 1...1_000_000_000), flag: "--maximum-ads",
                "ads loaded or asked for, every pool together; the default is about 1.6 GiB at the measured 1,677 B per native ad with its content (BENCHMARKS.md section 3); beyond it pools stop buying and are reported held back (memory_budget), and a pool with demand gets room: unleased ads of idle pools are dropped first (soonest expiry first), then ads of pools stocked beyond their target, never a leased one (REMOVED reason memory_budget, adloader_pool_ads_dropped_for_memory_total)"
            ),
            .value(
                "shutdownGracePeriod", \.limits.shutdownGracePeriod, .duration, flag: "--shutdown-grace-period",
                "on SIGTERM/SIGINT, the longest wait for clients to close (new calls get UNAVAILABLE once the drain began)"
            ),
        ])

    /// `capStore`: where app-open counts are kept (``CapStoreConfiguration``).
    static let capStoreKeys = ConfigTable<ServerConfiguration>(
        section: "capStore", defaults: ServerConfiguration(),
        keys: [
            .value(
                "type", \.capStore.type, .choice(), flag: "--cap-store",
                "app-open counts: sqlite (a file, survives restarts), redis (confirmed shows shared by a fleet; SHOWs reserved in flight are per daemon) or memory; opened only when a loader has format appOpen"
            ),
            .value(
                "sqlitePath", \.capStore.sqlitePath, .string, flag: "--cap-store-path", "the SQLite file (WAL mode)"),
            .value(
                "sqliteSynchronous", \.capStore.sqliteSynchronous, .choice(), flag: "--cap-store-synchronous",
                "normal: no fsync, ~20 us on the loop (survives kill -9, not power loss); full: fsync (survives power loss), on a worker thread with group commit"
            ),
            .value("redisHost", \.capStore.redisHost, .string, flag: "--redis-host", "Redis host"),
            .value("redisPort", \.capStore.redisPort, .int(in: 1...65_535), flag: "--redis-port", "Redis port"),
            .value(
                "redisKeyPrefix", \.capStore.redisKeyPrefix, .string, flag: "--redis-key-prefix",
                "first part of every key"),
            .value(
                "redisTimeout", \.capStore.redisTimeout, .duration, flag: "--redis-timeout",
                "connect and reply timeout (a timer: calls never block the loop)"),
            .value(
                "redisCluster", \.capStore.redisCluster, .bool, flag: "--redis-cluster",
                "Redis Cluster: redisHost:redisPort is a seed; calls go to their device's slot master, MOVED/ASK followed"
            ),
            .value(
                "redisUser", \.capStore.redisUser, .string, flag: "--redis-user",
                "ACL user for AUTH (empty: the default user; needs redisPasswordFile)"),
            .value(
                "redisPasswordFile", \.capStore.redisPasswordFile, .string, flag: "--redis-password-file",
                "file holding the AUTH password (first line; empty setting: no AUTH); read at start"),
            .value(
                "redisReconnectInterval", \.capStore.redisReconnectInterval, .duration,
                flag: "--redis-reconnect-interval",
                "after a Redis failure, calls fail at once this long, then the next one reconnects"),
            .value(
                "redisTLS", \.capStore.redisTLS, .bool, flag: "--redis-tls",
                "TLS 1.2+ to Redis (every cluster node, and poolStore redis): the server's certificate checked against redisTLSCAFile and its name; the handshake runs on the loop"
            ),
            .value(
                "redisTLSCAFile", \.capStore.redisTLSCAFile, .string, flag: "--redis-tls-ca",
                "PEM CA certificates Redis' certificate must chain to (empty: the system's trust store); read at start"),
            .value(
                "redisTLSCertificateFile", \.capStore.redisTLSCertificateFile, .string, flag: "--redis-tls-cert",
                "PEM client certificate for a Redis with tls-auth-clients (empty: none; needs redisTLSKeyFile); read at start"
            ),
            .value(
                "redisTLSKeyFile", \.capStore.redisTLSKeyFile, .string, flag: "--redis-tls-key",
                "PEM private key of redisTLSCertificateFile; read at start"),
            .value(
                "redisTLSServerName", \.capStore.redisTLSServerName, .string, flag: "--redis-tls-server-name",
                "name Redis' certificate must carry, and the SNI (empty: the address connected to, redisHost or each cluster node's)"
            ),
            .value(
                "outage", \.capStore.outage, .choice(CapStoreOutageMode.allCases.map { ($0.name, $0) }),
                flag: "--cap-store-outage",
                "when the store fails: refuse (AppOpen skips with STORE_UNAVAILABLE, never exceeding a cap) or allow (decides with counts 0)"
            ),
        ])

    /// `poolStore`: what a restart keeps (``PoolStoreConfiguration``).
    static let poolStoreKeys = ConfigTable<ServerConfiguration>(
        section: "poolStore", defaults: ServerConfiguration(),
        keys: [
            .value(
                "type", \.poolStore.type, .choice(), flag: "--pool-store",
                "what a restart keeps: sqlite (a file: win, billing and loss notices not yet delivered are sent after a restart, once), redis (the capStore's Redis, a key per instance name; read at start, written at a clean stop: no crash journal) or off (memory only)"
            ),
            .value(
                "sqlitePath", \.poolStore.sqlitePath, .string, flag: "--pool-store-path",
                "the SQLite file (WAL mode); one of another format or not a database is moved aside (one log line) and a new one started"
            ),
            .value(
                "redisKeyPrefix", \.poolStore.redisKeyPrefix, .string, flag: "--pool-store-redis-key-prefix",
                "with type redis: the key is PREFIX:{INSTANCE} (listeners.instanceName, else host:port); the host, port, AUTH and TLS are capStore's"
            ),
            .value(
                "redisTimeout", \.poolStore.redisTimeout, .duration, flag: "--pool-store-redis-timeout",
                "with type redis: connect and reply timeout of the start's read and the stop's write (blocking; no call is served then)"
            ),
            .value(
                "journalCompactionSize", \.poolStore.journalCompactionSize, .size,
                flag: "--pool-store-journal-compaction-size",
                "with type sqlite: rewrite the journal as one checkpoint (on its own thread) once this much was appended since the last one, and more than the checkpoint's size; smaller: a shorter replay after a crash, more compactions"
            ),
        ])

    /// `loaders.NAME`: one loader; only the JSON file configures loaders. Ranges are checked by
    /// ``LoaderConfiguration/validate()`` once every setting is in.
    static let loaderKeys = ConfigTable<LoaderConfiguration>(
        section: "loaders.NAME", defaults: LoaderConfiguration(),
        keys: [
            .value("source", \.source, .string, "demand source name"),
            .value(
                "format", \.format, .adFormat, "native, interstitial, rewarded or appOpen (banner: refused, not pooled)"
            ),
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
                "memory bound per pool: loaded + in flight; 10000 when unset; with sizing fixed also the target; with sizing demand a bound only when set (else limits.maximumAds)"
            ),
            .value("lifetime", \.lifetime, .duration, "duration an ad stays valid"),
            .value("sweepInterval", \.sweepInterval, .duration, "duration between expiry sweeps"),
            .value("showCountThreshold", \.showCountThreshold, .int(), "times one ad may be shown, >= 1"),
            .value(
                "leaseTimeout", \.leaseTimeout, .duration,
                "unreturned leases reclaimed after (never after the ad's expiry; a REUSED borrow renews)"),
            .value(
                "minimumRemainingLife", \.minimumRemainingLife, .optional(.duration, none: "null"),
                "least life an ad must have left to be lent; null = follow the ads' real life: a quarter of it, at most leaseTimeout (bids living 300 s are lent while 75 s are left); set: below lifetime"
            ),
            .value(
                "maximumConcurrentRequests", \.maximumConcurrentRequests, .int(),
                "ceiling of upstream requests in flight per pool, 1...1000000; below it a pool keeps what its demand needs: 2 x fresh ads/s x measured round trip / measured ads per request + 2 (Stats in_flight_target); a pool held back by the ceiling is reported (held_back pool_ceiling, metric, Watch HELD_BACK, warning log)"
            ),
            .value(
                "stockCover", \.stockCover, .duration,
                "stock of recent demand the pool keeps to serve alone if the upstream stops (fresh ads/s x cover), bounded by a tenth of an ad's lendable life; 0 = only what a refill needs"
            ),
            .value("idleTimeout", \.idleTimeout, .duration, "no Borrow/Prefetch for this long: no automatic top-ups"),
            .value(
                "poolRemovalTimeout", \.poolRemovalTimeout, .duration,
                "an idle pool holding nothing is removed after this long without demand"),
            .value("maximumBorrowWait", \.maximumBorrowWait, .duration, "longest wait a Borrow may ask for"),
            .value(
                "maximumPools", \.maximumPools, .int(),
                "ad units with a pool, 1...1000000; a new one beyond: RESOURCE_EXHAUSTED"),
            .value(
                "enabled", \.enabled, .bool,
                "boolean; SetLoaderEnabled (adloader disable/enable) switches it at run time, and a reload changes it only when this value changes"
            ),
            .value(
                "invalidationBlockTime", \.invalidationBlockTime, .duration,
                "a creative invalidated by a Return (adloader return --invalidate) is not lent again by this loader for this long; 0: remove its ads, block nothing"
            ),
            .value(
                "maximumBlockedCreatives", \.maximumBlockedCreatives, .int(),
                "creatives blocked at once, 1...100000; one more lifts the block ending soonest"),
            .value("retry.delay", \.retry.delay, .duration, "first retry delay"),
            .value("retry.multiplier", \.retry.multiplier, .double, "growth per retry, >= 1"),
            .value("retry.maximumDelay", \.retry.maximumDelay, .duration, "cap on the delay"),
            .value("retry.jitter", \.retry.jitter, .double, "random spread, 0...1"),
            .value("retry.maximumCount", \.retry.maximumCount, .int(), "automatic retries in a row"),
            .value("retry.probeInterval", \.retry.probeInterval, .duration, "probe period while unreachable"),
            .value(
                "appOpen.showOnFirstLaunch", \.appOpen.showOnFirstLaunch, .bool,
                "AppOpen: show on the app's first launch on a device (first_launch set)"),
            .value(
                "appOpen.showOnColdStart", \.appOpen.showOnColdStart, .bool,
                "AppOpen: show on a later process launch (LAUNCH without first_launch); returns to the foreground are apart"
            ),
            .value(
                "appOpen.backgroundThreshold", \.appOpen.backgroundThreshold, .duration,
                "AppOpen: background time from which a return is a hot start"),
            .value(
                "appOpen.excludeUnlockReturns", \.appOpen.excludeUnlockReturns, .bool,
                "AppOpen: never show on a return from screen unlock"),
            .value(
                "appOpen.maximumShowsPerSession", \.appOpen.maximumShowsPerSession, .optional(.int(), none: "null"),
                "AppOpen: shows per app session, confirmed plus reserved; null = unlimited"),
            .value(
                "appOpen.maximumShowsPerDay", \.appOpen.maximumShowsPerDay, .optional(.int(), none: "null"),
                "AppOpen: shows per day in the device's time zone, confirmed plus reserved; null = unlimited"),
            .value(
                "appOpen.sessionTimeout", \.appOpen.sessionTimeout, .duration,
                "AppOpen: a session inactive this long ends with its count"),
            .value(
                "placement", \.placement, .placement,
                "feed positions carrying ads (Plan): {\"fixedPositions\": [P...], \"repeatingInterval\": N (>= 2, from the last fixed position; null: none), \"maximumAdsPerFeed\": 1...4096} or MoPub's server positioning JSON verbatim ({\"fixed\": [{\"section\": 0, \"position\": P}], \"repeating\": {\"interval\": N}}); positions are 0-based, ads included"
            ),
            .value(
                "separation.creative", \.separation.creativeDistance, .optional(.int(), none: "null"),
                "Plan: the same creative no closer than this many positions; null: off"),
            .value(
                "separation.advertiserDomain", \.separation.advertiserDomainDistance, .optional(.int(), none: "null"),
                "Plan: ads sharing an advertiser domain (OpenRTB adomain) no closer than this many positions; null: off"
            ),
            .value(
                "separation.category", \.separation.categoryDistance, .optional(.int(), none: "null"),
                "Plan: ads sharing an IAB category (OpenRTB cat) no closer than this many positions; null: off"),
            .value(
                "separation.creativeOncePerFeed", \.separation.creativeOncePerFeed, .bool,
                "Plan: a creative at most once per feed session"),
            .value(
                "feeds.maximum", \.maximumFeeds, .int(),
                "Plan: feeds whose answers are kept at once, 1...10000000; a new feed beyond: RESOURCE_EXHAUSTED"),
            .value(
                "feeds.idleTimeout", \.configuredFeedIdleTimeout, .optional(.duration, none: "null"),
                "Plan: a feed with no call this long is forgotten, its unrendered leases returned; at most leaseTimeout; null: leaseTimeout"
            ),
            .value(
                "appOpen.reservationTimeout", \.appOpen.reservationTimeout, .duration,
                "AppOpen: a SHOW counts against the caps from its decision until its shown Return, its lease's end, or this long"
            ),
            .value(
                "bidFloor", \.bidFloor, .optional(.double, none: "null"),
                "imp.bidfloor of this loader's impressions; null = the source's bidFloor"),
            .value(
                "bidFloorCurrency", \.bidFloorCurrency, .optional(.string, none: "null"),
                "imp.bidfloorcur (ISO 4217); null = the source's currency"),
            .value(
                "consent.classes", \.consent.classes, .consentClasses,
                "consent classes in precedence order, at most 16, each a pool per ad unit: {\"NAME\": {gdpr, consentString, gpp, gppSectionIDs, usPrivacy, coppa, limitAdTracking}}; a borrower takes the first class whose terms are at least as strict as its signals; default: default, limited (lmt, us_privacy 1YYN), coppa (coppa, lmt, 1YYN); GDPR borrowers need a class with gdpr true and a consentString their consent covers"
            ),
            .value(
                "consent.defaultClass", \.consent.defaultClass, .string,
                "class of calls without privacy signals; one of consent.classes"),
            .value(
                "consent.requiredPurposes", \.consent.requiredPurposes, .purposes,
                "TCF purposes a GDPR borrower must consent to for any auction (Prebid Server: 2, basic ads); else FAILED_PRECONDITION naming this rule"
            ),
        ])

    /// Every setting that has a flag (and so an environment variable), in `--help` order: the
    /// sections' and those of each source type in `sourceTypes`.
    static func settings(sourceTypes: DemandSourceRegistry) -> [ConfigSetting] {
        (listenerKeys.settings(at: \.self) + adminKeys.settings(at: \.self) + authKeys.settings(at: \.self)
            + tlsKeys.settings(at: \.self)
            + logKeys.settings(at: \.self) + limitKeys.settings(at: \.self) + http2Keys.settings(at: \.self)
            + capStoreKeys.settings(at: \.self) + poolStoreKeys.settings(at: \.self))
            .filter { $0.flag != nil } + sourceTypes.flagSettings
    }

    /// Every setting that has a flag (and so an environment variable), in `--help` order.
    public static let settings = settings(sourceTypes: .standard)

    /// The top-level sections whose keys are plain settings.
    static let scalarSections = [
        listenerKeys, adminKeys, authKeys, tlsKeys, logKeys, limitKeys, http2Keys, capStoreKeys, poolStoreKeys,
    ]
}
