package import AdLoaderConfiguration
package import AdLoaderCore

// The synthetic source's settings, declared by the source's own module: `sources.NAME` with
// `"type": "synthetic"` (and the built-in source `synthetic`); the daemon's registry composes it.
extension SyntheticSource.Configuration: SourceSettings {
    package static var typeName: String { "synthetic" }

    package static var summary: String {
        "invents realistic native ads with configurable latency, fill and error rates, deterministic under a seed; needs no network"
    }

    package static let keys = ConfigTable<SyntheticSource.Configuration>(
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

    package func validate(field: String) throws(ConfigError) {
        do {
            try validate()
        } catch {
            // The source names its settings under its own prefix; errors name this source.
            throw error.renamed(from: Self.fieldPrefix, to: field)
        }
    }
}
