import AdLoaderConfiguration
import AdLoaderCore
import AdSources

/// `"type": "synthetic"`: ``SyntheticSource``, invented ads with configurable latency, fill and
/// error rates; the default type, and the type of the built-in source `synthetic`. Its keys are
/// AdSources' (`SyntheticSource+Settings.swift`); the daemon only builds the source.
struct SyntheticSourceType: DemandSourceType {
    typealias Settings = SyntheticSource.Configuration

    func makeSource(_ settings: SyntheticSource.Configuration, context: DemandSourceContext) throws -> any DemandSource
    {
        try SyntheticSource(configuration: settings, clock: context.clock, scheduler: context.scheduler)
    }
}
