import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdSources
import AdLoaderCore

extension ServerConfiguration {
    /// The `--help` text: every setting with its flag, environment variable, JSON key and default.
    public static var helpText: String {
        let loader = LoaderConfiguration()
        func seconds(_ duration: Duration) -> String { "\(duration.milliseconds / 1000)s" }
        var text = """
            adloaderd — keeps native ads loaded and lends them to feed cells over a framed gRPC-style protocol.

            Usage: adloaderd [--config FILE] [--OPTION VALUE ...]

            Settings come from, in increasing priority: defaults, the JSON file given by --config
            (or ADLOADERD_CONFIG), environment variables, command-line flags (--flag VALUE or
            --flag=VALUE). Durations: seconds, or a number with ms, s, m, h ("250ms", "5m").
            Sizes: bytes, or a number with KiB, MiB, GiB ("4MiB"). A bad setting exits with
            status 2 and a message naming it.

              --config FILE  (env ADLOADERD_CONFIG)  JSON configuration file; default: none

            """
        for setting in settings {
            let environment = setting.environment.map { "  env \($0)" } ?? ""
            text += "  \(setting.flag) VALUE\n"
            text += "      \(setting.help)\n"
            text += "      default: \(setting.defaultValue); JSON: \(setting.key)\(environment)\n"
        }
        text += """

            Loaders are configured only in the JSON file, as "loaders": { "NAME": { ... } }, which
            replaces the built-in loader "default" (source "synthetic", defaults below). Fields:
              source                        demand source name                    default: "\(loader.source)"
              keywords                      array of strings                      default: []
              contentURL                    string or null                        default: null
              nonPersonalized               boolean                               default: false
              targeting                     object of strings                     default: {}
              numberOfAdvertisements        ads per upstream request, 1...5       default: \(loader.numberOfAdvertisements)
              maximumRetainedAdvertisements loaded + in-flight target per pool    default: \(loader.maximumRetainedAdvertisements)
              lifetime                      duration an ad stays valid            default: \(seconds(loader.lifetime))
              sweepInterval                 duration between expiry sweeps        default: \(seconds(loader.sweepInterval))
              showCountThreshold            times one ad may be shown, >= 1       default: \(loader.showCountThreshold)
              leaseTimeout                  unreturned leases reclaimed after     default: \(seconds(loader.leaseTimeout))
              maximumBorrowWait             longest wait a Borrow may ask for     default: \(seconds(loader.maximumBorrowWait))
              maximumPools                  ad units with a pool, 1...1000000;    default: \(loader.maximumPools)
                                            a new one beyond: RESOURCE_EXHAUSTED
              enabled                       boolean                               default: \(loader.enabled)
              retry.delay                   first retry delay                     default: \(seconds(loader.retry.delay))
              retry.multiplier              growth per retry, >= 1                default: \(loader.retry.multiplier)
              retry.maximumDelay            cap on the delay                      default: \(seconds(loader.retry.maximumDelay))
              retry.jitter                  random spread, 0...1                  default: \(loader.retry.jitter)
              retry.maximumCount            automatic retries in a row            default: \(loader.retry.maximumCount)
              retry.probeInterval           probe period while unreachable        default: \(seconds(loader.retry.probeInterval))

            Sources are "sources": { "NAME": { "type": "synthetic", "latency", "latencyJitter",
            "fillRate", "errorRate", "unreachableRate", "seed" } }; the built-in one is "synthetic"
            (its flags above). Example file:

              { "listeners": { "host": "127.0.0.1", "port": 7411, "unixSocket": "/run/adloaderd.sock" },
                "limits": { "maxConnections": 1024, "idleTimeout": "5m" },
                "log": { "level": "info" },
                "sources": { "synthetic": { "latency": "50ms", "fillRate": 0.9, "seed": 7 } },
                "loaders": { "default": { "numberOfAdvertisements": 3, "maximumRetainedAdvertisements": 10 } } }

            Signals: SIGTERM or SIGINT stops accepting, ends parked borrows and watches with
            UNAVAILABLE, answers calls still arriving with UNAVAILABLE until each client closes its
            connection, and exits 0 within the shutdown grace period.

            """
        return text
    }
}
