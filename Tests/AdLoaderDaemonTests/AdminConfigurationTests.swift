import AdLoaderCore
import Testing

@testable import AdLoaderDaemon

/// The `admin` settings: off by default, every limit from the file, the environment or a flag,
/// bad values named.
@Suite struct AdminConfigurationTests {
    private func load(_ arguments: [String], file: String? = nil) throws(ConfigError) -> ServerConfiguration {
        let command = try ServerConfiguration.load(arguments: arguments, environment: [:]) {
            (path) throws(ConfigError) -> String in
            guard let file else { throw ConfigError(field: "config", message: "no file \(path)") }
            return file
        }
        guard case .run(let configuration) = command else { throw ConfigError(field: "test", message: "help") }
        return configuration
    }

    @Test func theAdminListenerIsOffByDefaultOnLoopback() throws {
        let admin = try load([]).admin
        #expect(admin.port == 0)
        #expect(admin.host == "127.0.0.1")
        #expect(admin.limits.maxRequestHeadBytes == 8 * 1024)
        #expect(admin.limits.maxHeaderCount == 64)
        #expect(admin.sampleInterval == .seconds(5))
    }

    @Test func flagsAndTheFileSetEveryAdminSetting() throws {
        let file = #"{"admin": {"host": "::1", "maxHeaders": 9, "sampleInterval": "250ms", "maxPoolSeries": 3}}"#
        let admin = try load(
            [
                "--config", "c.json", "--admin-port", "9090", "--admin-max-request-size", "2KiB",
                "--admin-request-timeout",
                "700ms", "--admin-idle-timeout", "2s", "--admin-max-connections", "5",
            ], file: file
        ).admin
        #expect(admin.host == "::1")
        #expect(admin.port == 9090)
        #expect(admin.limits.maxRequestHeadBytes == 2048)
        #expect(admin.limits.maxHeaderCount == 9)
        #expect(admin.limits.requestTimeout == .milliseconds(700))
        #expect(admin.limits.idleTimeout == .seconds(2))
        #expect(admin.limits.maxConnections == 5)
        #expect(admin.sampleInterval == .milliseconds(250))
        #expect(admin.maxPoolSeries == 3)
    }

    @Test(arguments: [
        (["--admin-port", "70000"], "admin.port"),
        (["--admin-host", "localhost"], "admin.host"),
        (["--port", "9000", "--admin-port", "9000"], "admin.port"),
        (["--admin-sample-interval", "10ms"], "admin.sampleInterval"),
        (["--admin-max-headers", "0"], "admin.maxHeaders"),
    ])
    func badAdminSettingsAreNamed(arguments: [String], field: String) {
        let error = #expect(throws: ConfigError.self) { try load(arguments) }
        #expect(error?.field == field)
    }

    @Test func helpListsTheAdminSection() {
        let help = ServerConfiguration.helpText
        #expect(help.contains("Admin HTTP (\"admin\")"))
        for flag in [
            "--admin-port", "--admin-host", "--admin-max-request-size", "--admin-request-timeout",
            "--admin-sample-interval",
        ] {
            #expect(help.contains(flag), "\(flag) missing from --help")
        }
    }
}
