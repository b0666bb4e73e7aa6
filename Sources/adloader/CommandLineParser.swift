import AdLoaderArguments
import AdLoaderClient
import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire

/// The parsed command line of `adloader`.
struct Invocation: Sendable {
    enum Command: Sendable {
        case prefetch(adUnitID: String, loader: String, count: UInt32)
        case borrow(adUnitID: String, loader: String, slot: String, waitMilliseconds: UInt32)
        case returnLease(
            leaseID: UInt64, shown: Bool, invalidate: String?, deviceIP: String = "", userAgent: String = "")
        case setEnabled(loader: String, enabled: Bool)
        case reload
        case serverInfo
        case plan(PlanRequestMessage)
        case version
        case stats(loader: String, adUnitID: String)
        case watch(loader: String, adUnitID: String, kinds: [AdEvent.Kind], count: Int?)
        case appOpen(AppOpenRequest, adUnitID: String, loader: String)
        case conformance(loader: String?, parkingLoader: String?, only: [String], transport: ConformanceSuite.Transport)
        case top(loader: String, adUnitID: String, intervalMilliseconds: UInt32, once: Bool)
        case examples(ExamplesCommand)
        case help
    }

    var endpoint: Endpoint = .default
    /// `--endpoints`: several daemons, one chosen by ``affinity`` (else the command's ad unit)
    /// on nginx's consistent-hash ring; nil: ``endpoint``.
    var endpoints: EndpointSet? = nil
    /// `--affinity KEY`: the key that picks the daemon among ``endpoints``.
    var affinity: String? = nil
    var json = false
    var timeoutMilliseconds: UInt32? = nil
    /// Bearer token sent with every call (`--token` or `$ADLOADER_TOKEN`).
    var token: String? = nil
    /// TLS to the daemon (`--tls`, `--tls-ca`, `--tls-cert`/`--tls-key`, `--tls-server-name`);
    /// nil: cleartext.
    var tls: ClientTLS? = nil
    var command: Command = .help

    /// The key that picks a daemon among ``endpoints``: `--affinity`, else the command's ad
    /// unit (empty for commands without one: the first endpoint that answers).
    var affinityKey: String {
        if let affinity { return affinity }
        switch command {
        case .prefetch(let adUnitID, _, _), .borrow(let adUnitID, _, _, _), .appOpen(_, let adUnitID, _):
            return adUnitID
        case .stats(_, let adUnitID), .watch(_, let adUnitID, _, _), .top(_, let adUnitID, _, _): return adUnitID
        case .plan(let request): return request.adUnitID
        case .returnLease, .setEnabled, .reload, .serverInfo, .conformance, .examples, .help, .version: return ""
        }
    }
}

/// A command line that cannot be run; printed with a hint to `--help`, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum CommandLineParser {
    static let usage = """
        adloader: the operator CLI of adloaderd

        USAGE
          adloader [GLOBAL OPTIONS] COMMAND [ARGUMENTS] [OPTIONS]

        GLOBAL OPTIONS (anywhere on the line)
          --endpoint HOST:PORT   TCP endpoint of the daemon (default 127.0.0.1:7411,
                                 or $ADLOADER_ENDPOINT); [IPV6]:PORT also works
          --unix PATH            connect to the daemon's Unix socket instead
          --endpoints A,B,C      several daemons (HOST:PORT each, written and ordered as
                                 nginx's `server` lines): the call goes to the one that
                                 owns the affinity key on nginx's consistent-hash ring
                                 (`hash $http_x_adloader_affinity consistent`), else the
                                 next one along the ring that can be reached
                                 disable, enable and reload go to every daemon of the
                                 list and print each one's answer (exit 0 only when all
                                 answered OK, 3 when one could not be reached)
          --affinity KEY         the affinity key (feed or user id) for --endpoints;
                                 default the command's ad unit. A return must reach the
                                 daemon that lent the lease: give the borrow's key
          --timeout MS           deadline of the call in milliseconds (default: none)
          --token TOKEN          bearer token for a daemon with auth.tokens (default:
                                 $ADLOADER_TOKEN; prefer the variable, a flag shows in ps)
          --tls                  connect with TLS (a daemon started with --tls-cert), the
                                 server's certificate checked against the system's CAs
          --tls-ca FILE          ... against the CA certificates in FILE (PEM) instead;
                                 implies --tls
          --tls-cert FILE        client certificate (PEM) for a daemon that asks for one
          --tls-key FILE         (--tls-client-auth); both together; imply --tls
          --tls-server-name NAME the name the server's certificate must carry (default:
                                 the endpoint's host); implies --tls
          --json                 print the answer as the proto3 JSON mapping of its
                                 response message (Proto/adloader/v1/adloader.proto:
                                 enum names, 64-bit integers as strings, times as
                                 *UnixMs); a call ending with a status prints
                                 {"code": N, "message": "..."}. Every command but top
                                 and examples run (which refuse it)
          -h, --help             show this help
          --version              print the version (the same as `adloaderd --version`)

        COMMANDS
          prefetch AD_UNIT [--loader NAME] [--count N]
              Top the pool of AD_UNIT up to its target: with demand sizing (the default)
              the larger of the demand target and N ads beyond those leased (N: the ads
              you will want soon, e.g. a first screen's cells; at most the loader's
              maximumRetainedAdvertisements); with fixed sizing, that maximum.
          borrow AD_UNIT [--loader NAME] [--slot KEY] [--wait MS]
              Lend one ad; with --slot the same slot gets the same lease back; with --wait
              the call parks up to MS milliseconds for an ad when the pool is empty.
          return LEASE_ID [--shown] [--invalidate REASON] [--device-ip IP] [--user-agent UA]
              End a lease; --shown counts it as displayed (--device-ip and --user-agent name the
              device it was shown on: the billing notice forwards them). --invalidate removes the ad and
              stops its loader lending its creative for invalidationBlockTime (e.g.
              --invalidate "bad creative"); the source is told.
          disable LOADER / enable LOADER
              Stop a loader (its ads dropped, parked borrows answered UNAVAILABLE, borrows
              refused) or start it again, until the next call or restart.
          reload
              Re-read the daemon's configuration file (as SIGHUP does) and print what
              changed per loader; a refused configuration prints the reason, exit 1.
          server-info
              Which daemon answered: version, build, instance name, uptime, enabled
              features (the ServerInfo call).
          plan FEED_ID --visible FIRST-LAST [--ahead N] [--ad-unit AD_UNIT] [--loader NAME]
              Plan a window of a feed (the Plan call): which positions carry ads, each
              with its lease (the ad) or "coming"; the same window planned again answers
              the same leases, a position rendered without an ad stays empty. AD_UNIT
              defaults to FEED_ID; N (look-ahead positions after LAST) to 3.
          stats [--loader NAME] [--ad-unit AD_UNIT]
              Counters and gauges per pool (empty filters: all).
          watch [--loader NAME] [--ad-unit AD_UNIT] [--kind KIND]... [--count N]
              Stream pool events until Ctrl-C (or N events). KIND: received,
              load-finished, expired, removed, leased, returned, pool-removed, loader-changed.
          top [--loader NAME] [--ad-unit AD_UNIT] [--interval MS] [--once]
              Pools at a glance, refreshing like top (every MS, default 2000): available,
              leased, in flight, borrows/s, hit ratio, upstream requests/s, waste. --once
              prints one view, rates over one interval, and exits. q or Ctrl-C stops.
              Lines are cut to the terminal's width (80 when not a terminal).
          app-open AD_UNIT --device ID --session ID [--event launch|foreground] [--first-launch]
                   [--background SECONDS] [--from-unlock] [--utc-offset ±HH:MM|SECONDS] [--loader NAME]
              Ask whether this app start (launch, the default) or return to the foreground
              shows an app-open ad: the decision, its reason, every flag and the device's
              session and daily counts; with SHOW, a lease to return with --shown once
              displayed (only that moves the counts). --utc-offset is the device's current
              offset (default +00:00), which decides its calendar day.
          conformance [--transport framed|grpc] [--loader NAME] [--parking-loader NAME]
                      [--only PREFIX]...
              Check a TCP endpoint against Proto/PROTOCOL.md: every method, status and
              limit, with raw frames; one PASS/FAIL/SKIP line per check (--json: a report).
              --transport grpc runs the transport-neutral checks (calls, answers, statuses)
              over gRPC (HTTP/2) instead; the same cases as over the framed protocol.
              --parking-loader names a loader whose source never fills (deterministic
              parking checks); --only runs the checks whose names start with PREFIX;
              --timeout bounds each socket operation (default 5000 ms).
          examples list
              The integration-case catalog (Examples/README.md): title, kind, format.
          examples run NAME... | --all
              Run Swift cases (--all: every one) against the daemon, which must serve
              Examples/adloaderd.json; PASS/FAIL per case. `make examples` runs all of them,
              the Python and shell ones included.

        EXIT STATUS
          0 success (a borrow answered "no ad yet" included), 1 the server answered an
          error status (conformance: a check failed), 2 bad command line, 3 cannot connect
          or connection lost.

        EXAMPLES
          adloader prefetch feed-native --count 8
          adloader borrow feed-native --slot feed-42/position-7 --wait 2000
          adloader return 17 --shown
          adloader return 18 --invalidate "bad creative"
          adloader disable feed && adloader enable feed
          adloader reload
          adloader stats --json
          adloader app-open splash --loader appopen --device d-1 --session s-1 --utc-offset +05:30
          adloader --endpoints 127.0.0.1:7421,127.0.0.1:7422,127.0.0.1:7423 --affinity feed-42 \\
              borrow feed-native --slot feed-42/position-7
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Invocation {
        var invocation = Invocation()
        if let text = environment["ADLOADER_ENDPOINT"], !text.isEmpty {
            do { invocation.endpoint = try Endpoint(parsing: text) } catch {
                throw UsageError("ADLOADER_ENDPOINT: \(error.message)")
            }
        }
        var positional: [String] = []
        var options: [String: [String]] = [:]
        var flags: Set<String> = []
        let valued: Set<String> = [
            "--endpoint", "--unix", "--timeout", "--loader", "--slot", "--wait", "--ad-unit", "--kind", "--count",
            "--parking-loader", "--only", "--token", "--transport", "--interval", "--device", "--session", "--event",
            "--background", "--utc-offset", "--invalidate", "--endpoints", "--affinity", "--visible", "--ahead",
            "--device-ip", "--user-agent", "--tls-ca", "--tls-cert", "--tls-key", "--tls-server-name",
        ]
        let boolean: Set<String> = [
            "--json", "--shown", "--help", "-h", "--version", "--once", "--first-launch", "--from-unlock", "--all",
            "--tls",
        ]
        var scanner = ArgumentScanner(arguments)
        do throws(ArgumentScanner.Failure) {
            while let argument = scanner.next() {
                switch argument {
                case .option(let name) where valued.contains(name):
                    options[name, default: []].append(try scanner.value())
                case .option(let name) where boolean.contains(name): flags.insert(name)
                case .option(let name): throw .unknown(name)
                case .positional(let text): positional.append(text)
                }
            }
        } catch {
            throw UsageError(error.description)
        }

        func single(_ name: String) throws(UsageError) -> String? {
            guard let values = options[name] else { return nil }
            guard values.count == 1 else { throw UsageError("\(name) given more than once") }
            return values[0]
        }
        func number<T: FixedWidthInteger>(_ name: String, _ text: String, as type: T.Type) throws(UsageError) -> T {
            guard let value = T(text), value >= 0 else {
                throw UsageError("\(name): \"\(text)\" is not a non-negative integer")
            }
            return value
        }

        if let text = try single("--endpoint") {
            do { invocation.endpoint = try Endpoint(parsing: text) } catch {
                throw UsageError("--endpoint: \(error.message)")
            }
        }
        if let path = try single("--unix") {
            guard options["--endpoint"] == nil else { throw UsageError("give --endpoint or --unix, not both") }
            invocation.endpoint = .unix(path: path)
        }
        if let text = try single("--endpoints") {
            guard options["--endpoint"] == nil, options["--unix"] == nil else {
                throw UsageError("give --endpoints or --endpoint/--unix, not both")
            }
            do { invocation.endpoints = try EndpointSet(parsing: text) } catch {
                throw UsageError("--endpoints: \(error.message)")
            }
        }
        invocation.affinity = try single("--affinity")
        if invocation.affinity != nil, invocation.endpoints == nil { throw UsageError("--affinity needs --endpoints") }
        if let token = environment["ADLOADER_TOKEN"], !token.isEmpty { invocation.token = token }
        if let token = try single("--token") { invocation.token = token }
        invocation.tls = try tlsOptions(flag: flags.contains("--tls"), single)
        if invocation.tls != nil, case .unix = invocation.endpoint {
            throw UsageError("--tls needs a TCP --endpoint (the daemon's Unix socket is cleartext)")
        }
        if let text = try single("--timeout") {
            invocation.timeoutMilliseconds = try number("--timeout", text, as: UInt32.self)
        }
        invocation.json = flags.contains("--json")
        if flags.contains("--version") {
            invocation.command = .version
            return invocation
        }
        if flags.contains("--help") || flags.contains("-h") || positional.first == "help" {
            invocation.command = .help
            return invocation
        }
        guard let name = positional.first else { throw UsageError("no command given") }
        let rest = Array(positional.dropFirst())
        let loader = try single("--loader") ?? ""
        let adUnitOption = try single("--ad-unit") ?? ""

        /// Options that only some commands take.
        func allow(_ allowed: Set<String>) throws(UsageError) {
            let global: Set<String> = [
                "--endpoint", "--unix", "--timeout", "--token", "--endpoints", "--affinity", "--tls-ca", "--tls-cert",
                "--tls-key", "--tls-server-name",
            ]
            for key in options.keys where !global.contains(key) && !allowed.contains(key) {
                throw UsageError("\(name) does not take \(key)")
            }
            for flag in ["--shown", "--once", "--first-launch", "--from-unlock", "--all"]
            where flags.contains(flag) && !allowed.contains(flag) {
                throw UsageError("\(name) does not take \(flag)")
            }
        }
        func expectArguments(_ count: Int, _ what: String) throws(UsageError) {
            guard rest.count == count else {
                throw UsageError(count == 0 ? "\(name) takes no arguments" : "\(name) needs \(what)")
            }
        }

        switch name {
        case "prefetch":
            try allow(["--loader", "--count"])
            try expectArguments(1, "an AD_UNIT")
            let count =
                try single("--count").map { (text) throws(UsageError) in try number("--count", text, as: UInt32.self) }
                ?? 0
            invocation.command = .prefetch(adUnitID: rest[0], loader: loader, count: count)
        case "borrow":
            try allow(["--loader", "--slot", "--wait"])
            try expectArguments(1, "an AD_UNIT")
            let wait =
                try single("--wait").map { (text) throws(UsageError) in try number("--wait", text, as: UInt32.self) }
                ?? 0
            invocation.command = .borrow(
                adUnitID: rest[0], loader: loader, slot: try single("--slot") ?? "", waitMilliseconds: wait)
        case "return":
            try allow(["--shown", "--invalidate", "--device-ip", "--user-agent"])
            try expectArguments(1, "a LEASE_ID")
            invocation.command = .returnLease(
                leaseID: try number("LEASE_ID", rest[0], as: UInt64.self), shown: flags.contains("--shown"),
                invalidate: try single("--invalidate"), deviceIP: try single("--device-ip") ?? "",
                userAgent: try single("--user-agent") ?? "")
        case "disable", "enable":
            try allow([])
            try expectArguments(1, "a LOADER")
            invocation.command = .setEnabled(loader: rest[0], enabled: name == "enable")
        case "reload":
            try allow([])
            try expectArguments(0, "")
            invocation.command = .reload
        case "server-info":
            try allow([])
            try expectArguments(0, "")
            invocation.command = .serverInfo
        case "plan":
            try allow(["--loader", "--ad-unit", "--visible", "--ahead"])
            try expectArguments(1, "a FEED_ID")
            guard let window = try single("--visible") else { throw UsageError("plan needs --visible FIRST-LAST") }
            let bounds = window.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard bounds.count == 2 || bounds.count == 1 else {
                throw UsageError("--visible: \"\(window)\" is not FIRST-LAST")
            }
            let first = try number("--visible", bounds[0], as: UInt32.self)
            let last = try number("--visible", bounds.count == 2 ? bounds[1] : bounds[0], as: UInt32.self)
            guard last >= first else { throw UsageError("--visible: LAST (\(last)) is before FIRST (\(first))") }
            let ahead =
                try single("--ahead").map { (text) throws(UsageError) in try number("--ahead", text, as: UInt32.self) }
                ?? 3
            invocation.command = .plan(
                PlanRequestMessage(
                    feedID: rest[0], adUnitID: adUnitOption.isEmpty ? rest[0] : adUnitOption, loader: loader,
                    firstVisible: first, lastVisible: last, ahead: ahead))
        case "stats":
            try allow(["--loader", "--ad-unit"])
            try expectArguments(0, "")
            invocation.command = .stats(loader: loader, adUnitID: adUnitOption)
        case "top":
            try allow(["--loader", "--ad-unit", "--interval", "--once"])
            try expectArguments(0, "")
            let interval =
                try single("--interval").map { (text) throws(UsageError) in
                    try number("--interval", text, as: UInt32.self)
                } ?? 2000
            guard interval >= 100 else { throw UsageError("--interval: at least 100 ms") }
            guard !invocation.json else {
                throw UsageError(
                    "top does not take --json (its view is rates between two Stats answers); use `adloader stats --json`"
                )
            }
            invocation.command = .top(
                loader: loader, adUnitID: adUnitOption, intervalMilliseconds: interval, once: flags.contains("--once"))
        case "watch":
            try allow(["--loader", "--ad-unit", "--kind", "--count"])
            try expectArguments(0, "")
            var kinds: [AdEvent.Kind] = []
            for text in options["--kind"] ?? [] {
                for part in text.split(separator: ",") {
                    guard let kind = AdEvent.Kind(wireName: String(part)) else {
                        throw UsageError("--kind: unknown event kind \"\(part)\"")
                    }
                    kinds.append(kind)
                }
            }
            let count = try single("--count").map { (text) throws(UsageError) in
                try number("--count", text, as: Int.self)
            }
            invocation.command = .watch(loader: loader, adUnitID: adUnitOption, kinds: kinds, count: count)
        case "app-open":
            try allow([
                "--loader", "--device", "--session", "--event", "--first-launch", "--background", "--from-unlock",
                "--utc-offset",
            ])
            try expectArguments(1, "an AD_UNIT")
            guard let device = try single("--device") else { throw UsageError("app-open needs --device ID") }
            guard let session = try single("--session") else { throw UsageError("app-open needs --session ID") }
            let event: AppOpenEvent
            switch try single("--event") ?? "launch" {
            case "launch": event = .launch
            case "foreground": event = .foreground
            case let other: throw UsageError("--event: must be launch or foreground, got \"\(other)\"")
            }
            let background =
                try single("--background").map { (text) throws(UsageError) in
                    try number("--background", text, as: UInt32.self)
                } ?? 0
            let offset = try single("--utc-offset").map { (text) throws(UsageError) in try utcOffset(text) } ?? 0
            let request = AppOpenRequest(
                deviceID: device, sessionID: session, event: event, isFirstLaunch: flags.contains("--first-launch"),
                backgroundDuration: .seconds(Int64(background)), fromUnlock: flags.contains("--from-unlock"),
                utcOffsetSeconds: offset)
            invocation.command = .appOpen(request, adUnitID: rest[0], loader: loader)
        case "conformance":
            try allow(["--loader", "--parking-loader", "--only", "--transport"])
            guard invocation.tls == nil else {
                throw UsageError("conformance speaks raw frames in cleartext: it does not take --tls (SECURITY.md)")
            }
            let transportName = try single("--transport") ?? "framed"
            guard let transport = ConformanceSuite.Transport(rawValue: transportName) else {
                throw UsageError("--transport: expected framed or grpc, got \"\(transportName)\"")
            }
            try expectArguments(0, "")
            guard case .tcp = invocation.endpoint, invocation.endpoints == nil else {
                throw UsageError("conformance needs a TCP --endpoint")
            }
            invocation.command = .conformance(
                loader: try single("--loader"), parkingLoader: try single("--parking-loader"),
                only: options["--only"] ?? [],
                transport: transport)
        case "examples":
            try allow(["--all"])
            guard invocation.tls == nil else { throw UsageError("examples does not take --tls") }
            guard invocation.endpoints == nil else {
                throw UsageError("examples runs against one daemon: give --endpoint")
            }
            let examples = try ExamplesCommand.parse(rest, all: flags.contains("--all"))
            if case .run = examples, invocation.json {
                throw UsageError(
                    "examples run does not take --json (it prints PASS/FAIL per case); `examples list --json` does")
            }
            invocation.command = .examples(examples)
        default:
            throw UsageError("unknown command \"\(name)\"")
        }
        return invocation
    }

    /// The TLS options, nil when none is given; any of them turns TLS on.
    static func tlsOptions(flag: Bool, _ single: (String) throws(UsageError) -> String?) throws(UsageError)
        -> ClientTLS?
    {
        let ca = try single("--tls-ca")
        let certificate = try single("--tls-cert")
        let key = try single("--tls-key")
        let serverName = try single("--tls-server-name")
        guard (certificate == nil) == (key == nil) else {
            throw UsageError("--tls-cert and --tls-key go together (a client certificate and its key)")
        }
        if serverName?.isEmpty == true { throw UsageError("--tls-server-name: empty name") }
        guard flag || ca != nil || certificate != nil || serverName != nil else { return nil }
        return ClientTLS(caFile: ca, certificateFile: certificate, keyFile: key, serverName: serverName)
    }

    /// A UTC offset as "+05:30", "-08:00", "Z" or signed seconds ("19800", "-28800").
    static func utcOffset(_ text: String) throws(UsageError) -> Int {
        if text == "Z" || text == "UTC" { return 0 }
        if let seconds = Int(text) { return seconds }
        let sign: Int
        switch text.first {
        case "+": sign = 1
        case "-": sign = -1
        default: throw UsageError("--utc-offset: \"\(text)\" is not ±HH:MM or seconds")
        }
        let parts = text.dropFirst().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hours = Int(parts[0]),
            let minutes = Int(parts[1]),
            minutes < 60
        else { throw UsageError("--utc-offset: \"\(text)\" is not ±HH:MM or seconds") }
        return sign * (hours * 3600 + minutes * 60)
    }
}
