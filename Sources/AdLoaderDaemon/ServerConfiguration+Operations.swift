import AdLoaderCore
import AdLoaderOperations
import AdLoaderService
import AdLoaderTLS

// What the operations module (metrics, dashboard) reads of the daemon's configuration, as plain
// values: it knows no ServerConfiguration.
extension ServerConfiguration {
    /// The settings an on-call engineer checks first, for the dashboard (after the listening addresses).
    var dashboardRows: [(String, String)] {
        var rows: [(String, String)] = [
            ("maxConnections", String(limits.maxConnections)),
            ("maxParkedBorrows", String(limits.maxParkedBorrows)),
            ("sources", sources.keys.sorted().map { "\($0) (\(sources[$0]!.type))" }.joined(separator: ", ")),
        ]
        for loader in loaders.sorted(by: { $0.name < $1.name }) {
            rows.append(
                (
                    "loader \(loader.name)",
                    "source \(loader.source), \(loader.format.name), \(loader.numberOfAdvertisements)/request, "
                        + "max \(loader.maximumRetainedAdvertisements) per pool, lifetime \(loader.lifetime.components.seconds)s, "
                        + "shows \(loader.showCountThreshold), max pools \(loader.maximumPools)"
                        + (loader.enabled ? "" : ", disabled")
                ))
        }
        return rows
    }

    /// The demand sources some loader uses (readiness counts only those).
    var usedSources: Set<String> { Set(loaders.map(\.source)) }
}

extension DaemonMetrics {
    convenience init(
        loader: NativeAdvertisementLoader, service: AdLoaderService, server: ServerContext,
        transports: [any ServerTransport], sources: [MeasuredDemandSource], capStore: MeasuredCapStore? = nil,
        tls: TLSAcceptor? = nil, configuration: ServerConfiguration, startedAtUnixSeconds: Double
    ) {
        self.init(
            loader: loader, service: service, server: server, transports: transports, sources: sources,
            capStore: capStore, usedSources: configuration.usedSources,
            maxPoolSeries: configuration.admin.maxPoolSeries,
            tls: tls, startedAtUnixSeconds: startedAtUnixSeconds)
    }
}

extension DashboardHistory {
    convenience init(metrics: DaemonMetrics, configuration: ServerConfiguration) {
        self.init(
            metrics: metrics, sampleInterval: configuration.admin.sampleInterval,
            configurationRows: configuration.dashboardRows)
    }
}
