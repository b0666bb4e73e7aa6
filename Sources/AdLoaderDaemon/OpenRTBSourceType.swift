import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderHTTP
import AdLoaderOpenRTB

/// `"type": "openrtb"`: ``OpenRTBSource``, ads of every format from an OpenRTB 2.6 exchange
/// such as Prebid Server, over libcurl on the daemon's loop, with win/billing and loss notices. Its keys
/// are AdLoaderOpenRTB's (`OpenRTBSource+Settings.swift`); the daemon builds the source's HTTP
/// clients on its loop.
struct OpenRTBSourceType: DemandSourceType {
    typealias Settings = OpenRTBSource.Configuration

    func makeSource(_ settings: OpenRTBSource.Configuration, context: DemandSourceContext) throws -> any DemandSource {
        guard let loop = context.loop else {
            throw ConfigError(field: "sources.openrtb", message: "an openrtb source needs the daemon's event loop")
        }
        try settings.validate(field: "sources.openrtb")
        var http = CurlHTTPClient.Configuration()
        http.maximumConcurrentRequests = settings.maximumConcurrentRequests
        http.maximumResponseBytes = settings.maximumResponseBytes
        http.maximumIdleConnections = max(4, settings.maximumConcurrentRequests)
        let client = try CurlHTTPClient(loop: loop, configuration: http)
        // The source's in-flight cap binding is visible: a warning at most once a minute.
        var lastWarning: Int64?
        let logger = context.logger
        let clock = context.clock
        let endpoint = settings.endpoint
        let cap = settings.maximumConcurrentRequests
        let setting = "sources.\(context.sourceName.isEmpty ? "NAME" : context.sourceName).maximumConcurrentRequests"
        client.onWait = { [weak client] in
            let now = clock.now.unixMilliseconds
            if let last = lastWarning, now - last < 60_000 { return }
            lastWarning = now
            logger.warning(
                "BidRequests wait: the source's in-flight cap binds",
                [
                    "endpoint": .string(endpoint), "cap": .int(Int64(cap)),
                    "waited": .int(Int64(client?.waitedCount ?? 0)),
                    "setting": .string(setting),
                ])
        }
        var noticeHTTP = CurlHTTPClient.Configuration()
        noticeHTTP.maximumConcurrentRequests = settings.noticeConcurrency
        noticeHTTP.maximumQueuedRequests = settings.noticeQueueLimit
        noticeHTTP.maximumResponseBytes = 64 << 10
        let noticeClient: CurlHTTPClient
        do {
            noticeClient = try CurlHTTPClient(loop: loop, configuration: noticeHTTP)
        } catch {
            client.close()
            throw error
        }
        let source: OpenRTBSource
        do {
            source = try OpenRTBSource(
                configuration: settings, client: client, noticeClient: noticeClient, clock: context.clock,
                scheduler: context.scheduler, noticeStore: context.noticeStore,
                name: context.sourceName.isEmpty ? "openrtb" : context.sourceName, logger: context.logger)
        } catch {
            client.close()
            noticeClient.close()
            throw error
        }
        // Notices the previous run left undelivered go out first (once: the store forgets each
        // when it is delivered or given up).
        let restored = source.restoreNotices()
        if restored > 0 {
            context.logger.info(
                "notices restored from the pool store",
                ["source": .string(context.sourceName), "notices": .int(Int64(restored))])
        }
        // Under way when the previous run ended: the exchange may have counted them, so they
        // are not sent again (a notice is never delivered twice).
        let uncertain = source.stats.noticesUncertain
        if uncertain > 0 {
            context.logger.warning(
                "notices uncertain after the previous run (in flight when it ended), not sent again",
                ["source": .string(context.sourceName), "notices": .int(Int64(uncertain))])
        }
        context.onStop {
            source.close()
            client.close()
            noticeClient.close()
        }
        return source
    }
}
