import AdLoaderCore
import AdLoaderDaemon

/// Fuzzes the daemon's configuration loading: the input is the `--config` file (JSON,
/// decoded as UTF-8 with repairs, as the daemon reads it); when it starts with `--`, its
/// first line is split on spaces into more command-line flags. Loading must return a command
/// or throw a ``ConfigError`` — never trap — and a configuration it returns must validate.
public enum ConfigurationFuzz: FuzzTarget {
    public static let name = "configuration"

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let text = String(decoding: input, as: UTF8.self)
        var flags: [String] = []
        var file = Substring(text)
        if text.hasPrefix("--") {
            let line = file.prefix { $0 != "\n" }
            flags = line.split(separator: " ").map(String.init)
            file = file.dropFirst(line.count + 1)
        }
        let result = Result { () throws(ConfigError) in try load(flags: flags, file: String(file)) }
        if case .success(.run(let configuration)) = result {
            do throws(ConfigError) {
                try configuration.validate()
            } catch {
                throw FuzzFailure("load returned a configuration that does not validate: \(error)")
            }
        }
    }

    /// The one call into the daemon's configuration code (kept to one place: it is being reshaped).
    static func load(flags: [String], file: String) throws(ConfigError) -> ServerCommand {
        try ServerConfiguration.load(
            arguments: ["--config", "fuzz.json"] + flags, environment: [:],
            readFile: { (_) throws(ConfigError) in file })
    }
}
