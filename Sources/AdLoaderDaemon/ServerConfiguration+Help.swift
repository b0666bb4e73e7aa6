import AdLoaderConfiguration
import AdLoaderCore

extension ServerConfiguration {
    /// The `--help` text, generated from the configuration tables: every setting with its
    /// JSON key, flag and environment variable (when it has them) and default.
    public static var helpText: String { helpText(sourceTypes: .standard) }

    /// The `--help` text with the source types of `sourceTypes`.
    static func helpText(sourceTypes: DemandSourceRegistry) -> String {
        var text = """
            adloaderd — keeps native ads loaded and lends them to feed cells, over real gRPC (HTTP/2) and a
            framed gRPC-style protocol on the same port (told apart by the first bytes) and Unix socket.

            Usage: adloaderd [--config FILE] [--OPTION VALUE ...]

            Settings come from, in increasing priority: defaults, the JSON file given by --config
            (or ADLOADERD_CONFIG), environment variables, command-line flags (--flag VALUE or
            --flag=VALUE). Durations: seconds, or a number with ms, s, m, h ("250ms", "5m").
            Sizes: bytes, or a number with KiB, MiB, GiB ("4MiB"). A bad setting exits with
            status 2 and a message naming it.

              --config FILE  (env \(configEnvironment))  JSON configuration file; default: none
              --version      print the version (the same as `adloader --version`) and exit

            """
        text += "\nListeners (\"listeners\" in the JSON file):\n" + flagBlocks(listenerKeys.settings)
        text += "\nAdmin HTTP (\"admin\"):\n" + flagBlocks(adminKeys.settings)
        text += "\nToken auth (\"auth\"), both transports:\n" + flagBlocks(authKeys.settings)
        text += "\nTLS (\"tls\") on the TCP listener, both transports:\n" + flagBlocks(tlsKeys.settings)
        text += "\nLogging (\"log\"):\n" + flagBlocks(logKeys.settings)
        text += "\nLimits (\"limits\"), both transports:\n" + flagBlocks(limitKeys.settings)
        text += "\nHTTP/2 (\"http2\"), the gRPC transport:\n" + flagBlocks(http2Keys.settings)
        text += "\nApp-open cap store (\"capStore\"):\n" + flagBlocks(capStoreKeys.settings)
        text += "\nPool store (\"poolStore\"), what a restart keeps:\n" + flagBlocks(poolStoreKeys.settings)
        text += """

            Loaders are configured only in the JSON file, as "loaders": { "NAME": { ... } }, which
            replaces the built-in loader "\(LoaderConfiguration.defaultName)" (source "\(loaderKeys.defaults.source)", defaults below). Keys:

            """
        text += columns(loaderKeys.settings)
        text += """

            Sources are "sources": { "NAME": { "type": "TYPE", ... } }; a source without "type" is
            of type "\(DemandSourceRegistry.defaultTypeName)". The built-in source is "synthetic". A type's
            flags configure the source named after the type; other sources of that type take the
            same keys in the file. Every source, of any type, also takes:

            """
        text += columns(DemandSourceConfiguration.commonKeys.settings)
        for type in sourceTypes.types {
            text += "\ntype \"\(type.name)\": " + wrap(type.summary, width: 90).joined(separator: "\n  ") + "\n"
            text += rows(type.settings)
        }
        text += """

            Example file:

              { "listeners": { "host": "127.0.0.1", "port": 7411, "unixSocket": "/run/adloaderd.sock" },
                "limits": { "maxConnections": 1024, "idleTimeout": "5m" },
                "log": { "level": "info" },
                "sources": { "synthetic": { "latency": "50ms", "fillRate": 0.9, "seed": 7 } },
                "loaders": { "default": { "numberOfAdvertisements": 3, "maximumRetainedAdvertisements": 10 } } }

            Signals: SIGTERM or SIGINT stops accepting and announces the shutdown (health NOT_SERVING,
            gRPC GOAWAY and PING), serves calls until every gRPC client acknowledged it (at most 1 s),
            then ends parked borrows and watches with UNAVAILABLE, answers calls still arriving with
            UNAVAILABLE until each client closes its connection, and exits 0 within the shutdown grace
            period.

            Reload: SIGHUP or the Reload call (adloader reload) reads the configuration as at start
            (the same --config file, the environment the process got, the same flags over them) and
            applies its loaders: added, removed, or changed keeping their pools and leases (sizing,
            caps, timeouts, lifetime, retry, appOpen, invalidation, enabled) or dropping them
            (source, format, keywords, contentURL, nonPersonalized, targeting); unchanged loaders
            keep everything. Every other section, the sources, and a first appOpen loader apply
            only at restart: a reload changing them is refused naming the key. A refused reload
            (bad file, bad value, restart-only key) keeps the running configuration; SIGHUP logs
            the reason, the call answers FAILED_PRECONDITION with it.

            """
        return text
    }

    /// Settings with a flag as ``flagBlocks(_:)``, then the others as ``columns(_:)``.
    static func rows(_ settings: [ConfigSetting]) -> String {
        let flagged = settings.filter { $0.flag != nil }
        let others = settings.filter { $0.flag == nil }
        return flagBlocks(flagged) + (others.isEmpty ? "" : columns(others))
    }

    /// Settings with a flag: three lines each (flag; help; default, JSON key, variable); a
    /// setting without a flag gets one line naming its JSON key.
    static func flagBlocks(_ settings: [ConfigSetting]) -> String {
        var text = ""
        for setting in settings {
            let environment = setting.environment.map { "  env \($0)" } ?? ""
            text += "  \(setting.flag.map { "\($0) VALUE" } ?? setting.key)\n"
            text += "      \(setting.help)\n"
            text += "      default: \(setting.defaultValue); JSON: \(setting.key)\(environment)\n"
        }
        return text
    }

    /// File-only settings as a table: key, help (wrapped), default.
    static func columns(_ settings: [ConfigSetting]) -> String {
        let keyWidth = (settings.map(\.name.count).max() ?? 0) + 2
        let helpWidth = 38
        var text = ""
        for setting in settings {
            let lines = wrap(setting.help, width: helpWidth)
            for (index, line) in lines.enumerated() {
                let key = index == 0 ? setting.name : ""
                var row = "  " + pad(key, keyWidth)
                row += index == 0 ? pad(line, helpWidth) + "default: \(setting.defaultValue)" : line
                text += row + "\n"
            }
        }
        return text
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count < width ? text + String(repeating: " ", count: width - text.count) : text + " "
    }

    /// Greedy word wrap; a word longer than `width` gets a line of its own.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width - 2 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }
}
