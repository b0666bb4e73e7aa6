import AdLoaderCore
import AdLoaderFramed
import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdSources

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's entry point: parse, configure, run. `main.swift` only calls ``run(arguments:environment:)``.
public enum ServerMain {
    /// Exit status for a bad configuration or a listener that cannot be bound.
    public static let configurationErrorStatus: Int32 = 2
    /// Exit status when serving failed after start.
    public static let failureStatus: Int32 = 1

    /// Runs the daemon to completion.
    /// - Parameters:
    ///   - arguments: command-line arguments without the program name.
    ///   - environment: the process environment.
    /// - Returns: the exit status: 0 after a clean shutdown (or `--help`), 2 for a bad
    ///   configuration (the message names the setting), 1 for other failures.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let configuration: ServerConfiguration
        do {
            switch try ServerConfiguration.load(arguments: arguments, environment: environment) {
            case .help(let text):
                writeOut(text)
                return 0
            case .run(let loaded):
                configuration = loaded
            }
        } catch {
            writeError("adloaderd: bad configuration: \(error.field): \(error.message)\n")
            return configurationErrorStatus
        }
        let logger = Logger(level: configuration.logLevel)
        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: configuration, logger: logger)
        } catch let error as ConfigError {
            writeError("adloaderd: bad configuration: \(error.field): \(error.message)\n")
            return configurationErrorStatus
        } catch {
            logger.error("cannot start", ["error": .string("\(error)")])
            return failureStatus
        }
        // A reload (SIGHUP, the Reload call) reads the configuration as at start: the same
        // file path, the same environment (as this process received it) and the same flags
        // over it, so only the file's changes can take effect.
        daemon.configurationSource = { () throws(ConfigError) -> ServerConfiguration in
            switch try ServerConfiguration.load(arguments: arguments, environment: environment) {
            case .run(let loaded): return loaded
            case .help: throw ConfigError(field: "config", message: "unexpected --help")
            }
        }
        let addresses: [ListenAddress]
        do {
            addresses = try daemon.start()
        } catch {
            logger.error("cannot listen", ["setting": .string(error.setting), "error": .string("\(error.error)")])
            writeError("adloaderd: bad configuration: \(error)\n")
            _ = daemon.run()
            return configurationErrorStatus
        }
        var banner = "adloaderd listening on " + addresses.map(\.description).joined(separator: " and ") + "\n"
        if case .tcp(let host, let port)? = addresses.first {
            let endpoint =
                host == ServerConfiguration.defaultHost && port == ServerConfiguration.defaultPort
                ? "" : " --endpoint \(ListenAddress.tcp(host: host, port: port))"
            if let command = trySuggestion(loaders: configuration.loaders) {
                banner += "try: adloader\(endpoint) \(command)\n"
            }
        }
        if let admin = daemon.adminAddress {
            banner += "admin: http://\(admin)/ (dashboard), /metrics, /healthz, /readyz\n"
        }
        writeOut(banner)
        return daemon.run()
    }

    /// The banner's first command for a new user: a borrow from a loader that exists (`default`
    /// when there is one, else the first configured loader that lends by Borrow), or an app-open
    /// call when every loader is of format appOpen; nil without an enabled loader.
    static func trySuggestion(loaders: [LoaderConfiguration]) -> String? {
        let enabled = loaders.filter(\.enabled)
        let lending = enabled.filter { $0.format != .appOpen }
        if let loader = lending.first(where: { $0.name == "default" }) ?? lending.first {
            let option = loader.name == "default" ? "" : " --loader \(loader.name)"
            return "borrow demo\(option) --wait 1000"
        }
        if let loader = enabled.first {
            return "app-open demo --loader \(loader.name) --device d-1 --session s-1"
        }
        return nil
    }

    /// The process environment, read from `environ` (no Foundation).
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    private static func writeOut(_ text: String) { write(fd: 1, text) }
    private static func writeError(_ text: String) { write(fd: 2, text) }

    private static func write(fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
