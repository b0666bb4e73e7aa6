import AdLoaderModel
import AdLoaderTime
import AdLoaderWire
import Glibc

/// Checks a running endpoint against `Proto/PROTOCOL.md`: every method, status and limit of
/// the framed protocol, over raw TCP sockets.
///
/// It deliberately does not use the client library: it writes the bytes itself so that it can
/// send malformed prefaces, frames and envelopes too. Every socket operation is bounded by
/// ``Options/timeout``, so a broken server fails checks instead of hanging the run.
///
/// The endpoint is expected to serve the loader ``Options/loader`` (by default the daemon's
/// embedded `default` loader on the synthetic source). Checks use fresh, unique ad unit ids,
/// so a run does not disturb other clients' pools and can be repeated against one daemon.
///
/// ```swift
/// let report = ConformanceSuite(host: "127.0.0.1", port: 7411).run { print($0) }
/// print(report.summary)
/// ```
///
/// For deterministic parking checks and the limit checks, start the daemon with a loader
/// whose source never fills and pass it and the configured limits:
///
/// ```json
/// { "sources": { "synthetic": {}, "empty": { "type": "synthetic", "fillRate": 0 } },
///   "loaders": { "default": {}, "parking": { "source": "empty" } },
///   "limits": { "maxConnections": 20, "maxParkedBorrows": 50, "idleTimeout": "3s", "partialFrameTimeout": "2s" } }
/// ```
///
/// - Important: the connections and parked-borrows checks assume no other client holds
///   connections or parked borrows on the endpoint while they run.
public struct ConformanceSuite: Sendable {
    /// The limits the endpoint was configured with; limit checks compare against these.
    /// A nil limit is not checked (its check is reported as skipped).
    public struct Limits: Hashable, Sendable {
        /// The largest message body the server accepts (default 4 MiB).
        public var maximumMessageSize: Int = 4 * 1024 * 1024
        /// The longest `ad_unit_id`, `loader` or `slot_key` accepted, in bytes (default 128).
        public var maximumIdentifierLength: Int = 128
        /// The longest `wait_ms` a Borrow may ask for (the loader's maximumBorrowWait, default 30 s).
        public var maximumBorrowWait: Duration = .seconds(30)
        /// Calls in flight per connection; checked with Watch calls, which stay open.
        public var maximumCallsInFlight: Int? = nil
        /// Open connections; checked only up to 256.
        public var maximumConnections: Int? = nil
        /// Parked borrows; checked only with ``Options/parkingLoader``.
        public var maximumParkedBorrows: Int? = nil
        /// A connection with no call in flight and no bytes arriving is closed after this.
        public var idleTimeout: Duration? = nil
        /// A connection that stops in the middle of a frame (or preface) is closed after this.
        public var partialFrameTimeout: Duration? = nil
        /// Check that the server stops reading from a client that does not read its answers.
        public var checkOutputCap: Bool = false

        public init() {}
    }

    /// What the suite may assume about the endpoint, and how patient it is.
    public struct Options: Hashable, Sendable {
        /// The loader to exercise; it must exist and be able to fill ads.
        public var loader: String = "default"  // the loader name a daemon configures by default
        /// A loader whose source never fills (e.g. synthetic with fillRate 0), so borrows on it
        /// stay parked for as long as they wait. Without it, parking checks use ``loader`` and
        /// rely on its source answering more slowly than a local round trip (the synthetic
        /// source's default 50 ms latency).
        public var parkingLoader: String? = nil
        /// The configured limits.
        public var limits = Limits()
        /// The longest any one socket operation or awaited answer may take.
        public var timeout: Duration = .seconds(5)
        /// Borrow/Return pairs sent on one connection by the pipelining check.
        public var pipelinedPairs = 1_000
        /// Pairs in flight at once in that check; at most the loader's maximumRetainedAdvertisements.
        public var pipelineDepth = 8
        /// Run only the checks whose name starts with one of these; nil runs every check.
        public var only: [String]? = nil
        /// The transport the checks speak. Over gRPC only the transport-neutral checks run
        /// (``ConformanceSuite/transportNeutralChecks``): the same calls, statuses and
        /// messages as over the framed protocol; the rest are about framing.
        public var transport: Transport = .framed

        public init() {}
    }

    /// A transport of the endpoint.
    public enum Transport: String, Hashable, Sendable, CaseIterable {
        /// The framed protocol of Proto/PROTOCOL.md sections 1-10.
        case framed
        /// gRPC over HTTP/2 cleartext (section 11).
        case grpc
    }

    /// The checks that run over both transports: calls, their answers and their statuses.
    public static let transportNeutralChecks: Set<String> = [
        "stats.round-trip", "stats.filters-matching-nothing", "prefetch.round-trip", "borrow-return.round-trip",
        "borrow.slot-affinity", "borrow.no-ad-yet", "return.unknown-lease-not-found", "invalid.empty-ad-unit-id",
        "invalid.unknown-loader", "invalid.identifier-too-long", "invalid.wait-above-maximum", "invalid.lease-id-zero",
        "invalid.watch-unknown-kind", "call.unknown-method-unimplemented", "call.undecodable-message",
        "control.invalidate-needs-a-reason", "control.set-loader-enabled-unknown-loader",
        "serverinfo.round-trip", "control.set-loader-enabled-round-trip", "control.reload-round-trip",
        "appopen.round-trip", "watch.round-trip", "plan.round-trip", "plan.invalid-window",
    ]

    public let host: String
    public let port: Int
    public let options: Options

    /// Prepares a run against `host:port`; nothing connects until ``run(log:)``.
    /// - Parameters:
    ///   - host: a name or address, e.g. "127.0.0.1", "localhost", "::1".
    ///   - port: the TCP port of the framed protocol.
    ///   - options: the loader to use, the configured limits, the timeout.
    public init(host: String, port: Int, options: Options = Options()) {
        self.host = host
        self.port = port
        self.options = options
    }

    /// Prepares a run against an endpoint written `HOST:PORT` (`[::1]:7411` for IPv6).
    /// - Returns: nil when `endpoint` is not `HOST:PORT` with a port in 1...65535.
    public init?(endpoint: String, options: Options = Options()) {
        guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        var host = String(endpoint[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port, options: options)
    }

    /// The names of every check, in the order they run.
    public static var checkNames: [String] { ConformanceRun.checks.map(\.name) }

    /// Runs the checks one after another and reports each.
    /// - Parameter log: called with one line when each check ends (and a header line first).
    /// - Returns: every check's result; `passed` is false when any check failed.
    public func run(log: (String) -> Void = { _ in }) -> ConformanceReport {
        let run = ConformanceRun(host: host, port: port, options: options)
        log("conformance: \(host):\(port) over \(options.transport.rawValue), loader \"\(options.loader)\"")
        var results: [ConformanceReport.Result] = []
        for check in ConformanceRun.checks where selected(check.name) {
            let started = ContinuousClock.now
            var result: ConformanceReport.Result
            do {
                let outcome = try check.body(run)
                switch outcome {
                case .passed(let detail):
                    result = .init(name: check.name, passed: true, detail: detail)
                case .skipped(let reason):
                    result = .init(name: check.name, passed: true, skipped: true, detail: reason)
                }
            } catch {
                result = .init(name: check.name, passed: false, detail: "\(error)")
            }
            result.duration = ContinuousClock.now - started
            log(result.line)
            results.append(result)
        }
        let report = ConformanceReport(results: results)
        log(report.summary)
        return report
    }

    private func selected(_ name: String) -> Bool {
        if options.transport == .grpc, !Self.transportNeutralChecks.contains(name) { return false }
        guard let only = options.only else { return true }
        return only.contains { name.hasPrefix($0) }
    }
}

/// What a check found when it did not fail.
enum CheckOutcome {
    case passed(String)
    case skipped(String)
}

/// The state of one run: endpoint, options, and a source of unique ad unit ids.
final class ConformanceRun {
    struct Check {
        var name: String
        var body: (ConformanceRun) throws -> CheckOutcome
    }

    let host: String
    let port: Int
    let options: ConformanceSuite.Options
    /// Makes this run's ad unit ids unique, so repeated runs against one daemon start empty.
    private let runToken: String
    private var adUnitCounter = 0

    init(host: String, port: Int, options: ConformanceSuite.Options) {
        self.host = host
        self.port = port
        self.options = options
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let mixed =
            UInt64(truncatingIfNeeded: now.tv_sec) &* 1_000_000_007 &+ UInt64(truncatingIfNeeded: now.tv_nsec)
            &+ UInt64(truncatingIfNeeded: getpid()) << 40
        runToken = String(mixed % 0xFFFF_FFFF, radix: 36)
    }

    var loader: String { options.loader }
    var timeout: Duration { options.timeout }

    /// A fresh ad unit id, e.g. `conformance-k2x9a-3-slot-affinity`.
    func freshAdUnit(_ label: String) -> String {
        adUnitCounter += 1
        return "conformance-\(runToken)-\(adUnitCounter)-\(label)"
    }

    /// A connection of the run's transport, ready for calls (for the transport-neutral checks).
    func connectCalls() throws(CheckFailure) -> any CallConnection {
        switch options.transport {
        case .framed: return try connect()
        case .grpc: return try GRPCCallConnection.connect(host: host, port: port, timeout: timeout)
        }
    }

    /// A connection that has exchanged prefaces.
    func connect() throws(CheckFailure) -> RawConnection {
        let connection = try RawConnection.connect(host: host, port: port, timeout: timeout)
        try connection.handshake()
        return connection
    }

    /// A connection with nothing sent yet.
    func connectRaw(receiveBufferSize: Int32? = nil) throws(CheckFailure) -> RawConnection {
        try RawConnection.connect(host: host, port: port, timeout: timeout, receiveBufferSize: receiveBufferSize)
    }

    /// Fails unless a fresh, well-behaved connection still gets an OK Stats answer.
    func expectServerHealthy(after what: String) throws(CheckFailure) {
        do {
            let connection = try connect()
            defer { connection.close() }
            let result = try connection.call(MethodName.stats, Requests.stats(loader: loader, adUnitID: ""))
            guard result.status.code == .ok else { throw CheckFailure("Stats answered \(result.status)") }
        } catch {
            throw CheckFailure("after \(what), a fresh connection failed: \(error)")
        }
    }

    /// Every check, in the order they run: well-formed calls first, abuse and limits last.
    static var checks: [Check] { callChecks + roundTripChecks + streamChecks + abuseChecks + limitChecks }
}
