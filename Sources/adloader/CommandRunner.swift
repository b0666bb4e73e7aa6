import AdLoaderBuild
import AdLoaderClient
import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire
import Foundation

/// Runs one `adloader` invocation; returns the process exit status.
///
/// Not main-actor isolated on purpose (see NOTES-swift-c.md, "silent crash"): everything the
/// client calls back runs on other threads.
enum CommandRunner {
    static let exitOK: Int32 = 0
    static let exitStatus: Int32 = 1
    static let exitUsage: Int32 = 2
    static let exitConnection: Int32 = 3

    static func main(arguments: [String], environment: [String: String]) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try CommandLineParser.parse(arguments, environment: environment)
        } catch {
            printError("adloader: \(error)\nRun `adloader --help` for usage.")
            return exitUsage
        }
        if case .help = invocation.command {
            print(CommandLineParser.usage)
            return exitOK
        }
        if case .version = invocation.command {
            print("adloader \(BuildInfo.version) (\(BuildCommit.build(configuration: BuildInfo.build)))")
            return exitOK
        }
        if case .conformance(let loader, let parkingLoader, let only, let transport) = invocation.command,
            case .tcp(let host, let port) = invocation.endpoint
        {
            return runConformance(
                host: host, port: port, loader: loader, parkingLoader: parkingLoader, only: only, transport: transport,
                timeoutMilliseconds: invocation.timeoutMilliseconds, json: invocation.json)
        }
        if case .examples(let command) = invocation.command {
            switch command {
            case .list:
                ExamplesCommand.list(json: invocation.json)
                return exitOK
            case .run(let names, let all):
                return await ExamplesCommand.run(
                    names: names, all: all, endpoint: invocation.endpoint, token: invocation.token)
            }
        }
        if let endpoints = invocation.endpoints, FleetControl.appliesTo(invocation.command) {
            return await FleetControl.run(invocation, endpoints: endpoints)
        }
        let client: AdLoaderClient
        do {
            if let endpoints = invocation.endpoints {
                // The daemon nginx would route this key to (consistent hash over the list).
                client = try AdLoaderClient.connect(
                    to: endpoints, affinityKey: invocation.affinityKey, token: invocation.token, tls: invocation.tls)
            } else {
                client = try AdLoaderClient.connect(
                    to: invocation.endpoint, token: invocation.token, tls: invocation.tls)
            }
        } catch {
            let target = invocation.endpoints.map { $0.endpoints.map(\.description).joined(separator: ",") }
            printError(
                "adloader: cannot reach adloaderd at \(target ?? invocation.endpoint.description): \(describe(error))")
            return exitConnection
        }
        defer { client.close() }
        let output = Output(json: invocation.json)
        let timeout = invocation.timeoutMilliseconds.map { Duration.milliseconds(Int64($0)) }
        do {
            switch invocation.command {
            case .prefetch(let adUnitID, let loader, let count):
                output.prefetch(
                    try await client.prefetch(adUnitID: adUnitID, loader: loader, count: count, timeout: timeout))
            case .borrow(let adUnitID, let loader, let slot, let wait):
                let result = try await client.borrow(
                    adUnitID: adUnitID, loader: loader, slot: slot, wait: .milliseconds(Int64(wait)), timeout: timeout)
                output.borrow(result)
            case .returnLease(let leaseID, let shown, let invalidate?, _, _):
                // With several replicas: the one that lent it invalidates it (the lease id names it).
                let outcome =
                    if let endpoints = invocation.endpoints {
                        try await client.invalidateLease(
                            leaseID, shown: shown, reason: invalidate, retryingIn: endpoints, token: invocation.token,
                            timeout: timeout)
                    } else {
                        try await client.invalidateLease(leaseID, shown: shown, reason: invalidate, timeout: timeout)
                    }
                output.returned(leaseID: leaseID, outcome: outcome)
            case .returnLease(let leaseID, let shown, nil, let deviceIP, let userAgent):
                // With several replicas: the one that lent it answers (the lease id names it).
                let outcome =
                    if let endpoints = invocation.endpoints {
                        try await client.returnLease(
                            leaseID, shown: shown, deviceIP: deviceIP, deviceUserAgent: userAgent,
                            retryingIn: endpoints, token: invocation.token, timeout: timeout)
                    } else {
                        try await client.returnLease(
                            leaseID, shown: shown, deviceIP: deviceIP, deviceUserAgent: userAgent, timeout: timeout)
                    }
                output.returned(leaseID: leaseID, outcome: outcome)
            case .setEnabled(let loader, let enabled):
                let changed = try await client.setLoaderEnabled(loader, enabled: enabled, timeout: timeout)
                output.loaderSwitched(loader, enabled: enabled, changed: changed)
            case .reload:
                output.reloaded(try await client.reload(timeout: timeout))
            case .serverInfo:
                output.serverInfo(try await client.serverInfo(timeout: timeout))
            case .plan(let request):
                output.plan(try await client.plan(request, timeout: timeout), request: request)
            case .stats(let loader, let adUnitID):
                let answer = try await client.statsResponse(loader: loader, adUnitID: adUnitID, timeout: timeout)
                output.stats(
                    answer.pools, sources: answer.sources, loaders: answer.loaders, instance: answer.instance,
                    feeds: answer.feeds, poolStore: answer.poolStore)
            case .watch(let loader, let adUnitID, let kinds, let count):
                var seen = 0
                if count == 0 { return exitOK }
                for try await event in client.watch(loader: loader, adUnitID: adUnitID, kinds: kinds, timeout: timeout)
                {
                    output.event(event)
                    seen += 1
                    if let count, seen >= count { break }
                }
            case .top(let loader, let adUnitID, let interval, let once):
                try await TopView.run(
                    client: client, endpoint: "\(client.endpoint)", loader: loader, adUnitID: adUnitID,
                    interval: .milliseconds(Int64(interval)), once: once, timeout: timeout)
            case .appOpen(let request, let adUnitID, let loader):
                output.appOpen(try await client.appOpen(request, adUnitID: adUnitID, loader: loader, timeout: timeout))
            case .help, .version, .conformance, .examples:
                break
            }
            return exitOK
        } catch let status as Status {
            if invocation.json { output.status(status) }
            printError("adloader: \(status)")
            return status.code == .unavailable && status.message.hasPrefix("connection") ? exitConnection : exitStatus
        } catch {
            printError("adloader: \(describe(error))")
            return exitStatus
        }
    }

    /// Runs AdLoaderConformance's suite; exit 0 when every check passed (or was skipped).
    static func runConformance(
        host: String, port: Int, loader: String?, parkingLoader: String?, only: [String],
        transport: ConformanceSuite.Transport, timeoutMilliseconds: UInt32?, json: Bool
    ) -> Int32 {
        var options = ConformanceSuite.Options()
        options.transport = transport
        if let loader { options.loader = loader }
        options.parkingLoader = parkingLoader
        if !only.isEmpty { options.only = only }
        if let timeoutMilliseconds { options.timeout = .milliseconds(Int64(timeoutMilliseconds)) }
        let suite = ConformanceSuite(host: host, port: port, options: options)
        let report = suite.run { line in
            if json {
                printError(line)
            } else {
                print(line)
                fflush(nil)
            }
        }
        // The log's last line is already the summary; JSON mode prints the whole report.
        if json { print(report.json) }
        return report.passed ? exitOK : exitStatus
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? AdLoaderClientError { return error.message }
        return String(describing: error)
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
