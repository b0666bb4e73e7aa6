import AdLoaderCore

/// Stands in for AdLoaderCore's `AdFormat` until `LoaderConfiguration.format` exists, so that
/// the `loaders.NAME.format` row parses and checks its values today.
///
/// TODO(format): delete this file once `LoaderConfiguration.format: AdFormat` lands, and point
/// the row in `ServerConfiguration.loaderKeys` at `\.format` (see the TODO there). Until then a
/// loader's format is parsed and checked but not stored: every loader is native.
enum PendingAdFormat: String, CaseIterable, Sendable {
    case native, interstitial, rewarded, appOpen
}

extension LoaderConfiguration {
    /// TODO(format): the placeholder of `format`; always native, setting it does nothing.
    var pendingFormat: PendingAdFormat {
        get { .native }
        set {}
    }
}
