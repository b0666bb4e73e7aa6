import AdLoaderConfiguration
import AdLoaderCore
import AdSources

/// `"type": "synthetic"`: ``SyntheticSource``, invented ads with configurable latency, fill and
/// error rates; the default type, and the type of the built-in source `synthetic`.
struct SyntheticSourceType: DemandSourceType {
    var name: String { "synthetic" }

    var summary: String {
        "invents realistic native ads with configurable latency, fill and error rates, deterministic under a seed; needs no network"
    }

    var keys: ConfigTable<SyntheticSource.Configuration> { Self.keys }

    private static let keys = ConfigTable<SyntheticSource.Configuration>(
        section: "sources.synthetic", defaults: SyntheticSource.Configuration(),
        keys: [
            .value("latency", \.latency, .duration, flag: "--synthetic-latency", "time to answer"),
            .value(
                "latencyJitter", \.latencyJitter, .duration, flag: "--synthetic-latency-jitter",
                "extra random latency, 0...this"),
            .value(
                "fillRate", \.fillRate, .double, flag: "--synthetic-fill-rate", "chance each asked-for ad is delivered"),
            .value(
                "errorRate", \.errorRate, .double, flag: "--synthetic-error-rate", "chance a request fails (retryable)"),
            .value(
                "unreachableRate", \.unreachableRate, .double, flag: "--synthetic-unreachable-rate",
                "chance a request fails as unreachable"),
            .value("seed", \.seed, .uint64, flag: "--synthetic-seed", "seed of its generator"),
        ])

    func validate(_ settings: SyntheticSource.Configuration, field: String) throws(ConfigError) {
        do {
            try settings.validate()
        } catch {
            // The source names its settings under its own prefix; errors name this source.
            let prefix = SyntheticSource.Configuration.fieldPrefix
            guard error.field.hasPrefix(prefix) else { throw error }
            throw ConfigError(field: field + error.field.dropFirst(prefix.count), message: error.message)
        }
    }

    func makeSource(_ settings: SyntheticSource.Configuration, context: DemandSourceContext) throws -> any DemandSource
    {
        try SyntheticSource(configuration: settings, clock: context.clock, scheduler: context.scheduler)
    }
}
