import AdLoaderCore
import Testing

@testable import AdLoaderDaemon

/// The start banner's "try:" line names a loader the configuration has (issue 26: it said
/// `borrow demo` even when no loader was named `default`).
@Suite struct StartBannerTests {
    private func loader(_ name: String, _ format: AdFormat = .native, enabled: Bool = true) -> LoaderConfiguration {
        var loader = LoaderConfiguration(name: name)
        loader.format = format
        loader.enabled = enabled
        return loader
    }

    @Test func theDefaultLoaderNeedsNoOption() {
        #expect(ServerMain.trySuggestion(loaders: [loader("feed"), loader("default")]) == "borrow demo --wait 1000")
    }

    @Test func withoutDefaultTheFirstLoaderThatBorrowsIsNamed() {
        #expect(
            ServerMain.trySuggestion(loaders: [loader("splash", .appOpen), loader("feed"), loader("video", .rewarded)])
                == "borrow demo --loader feed --wait 1000")
        #expect(
            ServerMain.trySuggestion(loaders: [loader("default", enabled: false), loader("news")])
                == "borrow demo --loader news --wait 1000")
    }

    @Test func onlyAppOpenLoadersSuggestAnAppOpenCall() {
        #expect(
            ServerMain.trySuggestion(loaders: [loader("splash", .appOpen)])
                == "app-open demo --loader splash --device d-1 --session s-1")
    }

    @Test func noEnabledLoaderSuggestsNothing() {
        #expect(ServerMain.trySuggestion(loaders: [loader("default", enabled: false)]) == nil)
    }
}
