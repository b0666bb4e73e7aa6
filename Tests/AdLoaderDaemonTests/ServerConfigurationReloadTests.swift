import AdLoaderCore
import Testing

@testable import AdLoaderDaemon

/// What a reload may change: the loaders; anything else is named as restart-only.
@Suite struct ServerConfigurationReloadTests {
    private func load(_ file: String, arguments: [String] = ["--config", "c.json"]) throws -> ServerConfiguration {
        let command = try ServerConfiguration.load(arguments: arguments, environment: [:]) {
            (_) throws(ConfigError) -> String in file
        }
        guard case .run(let configuration) = command else {
            throw ConfigError(field: "test", message: "no configuration")
        }
        return configuration
    }

    @Test func changesOfLoadersOnlyAreReloadable() throws {
        let running = try load(#"{ "loaders": { "default": {} } }"#)
        let next = try load(#"{ "loaders": { "default": { "leaseTimeout": "1m" }, "video": { "keywords": ["v"] } } }"#)
        #expect(next.restartOnlyChange(from: running) == nil)
        #expect(running.restartOnlyChange(from: running) == nil)
    }

    @Test(arguments: [
        (#"{ "limits": { "maxConnections": 5 } }"#, "limits.maxConnections"),
        (#"{ "listeners": { "unixSocket": "/tmp/x.sock" } }"#, "listeners.unixSocket"),
        (#"{ "auth": { "requireOnLoopback": true } }"#, "auth.requireOnLoopback"),
        (#"{ "tls": { "certificateFile": "c.pem", "keyFile": "k.pem" } }"#, "tls.certificateFile"),
        (#"{ "log": { "level": "error" } }"#, "log.level"),
        (#"{ "sources": { "synthetic": { "latency": "1s" } } }"#, "sources.synthetic"),
        (#"{ "sources": { "other": { "type": "synthetic" } } }"#, "sources.other"),
        (#"{ "loaders": { "open": { "format": "appOpen", "showCountThreshold": 1 } } }"#, "loaders.open.format"),
    ])
    func aRestartOnlySettingIsNamed(file: String, key: String) throws {
        let running = try load(#"{ "loaders": { "default": {} } }"#)
        #expect(try load(file).restartOnlyChange(from: running) == key)
    }

    @Test(arguments: [
        #"{ "auth": { "tokens": ["t"] } }"#,
        #"{ "auth": { "namedTokens": { "feed": "f" }, "tokenFiles": { "ops": "/etc/ops.token" } } }"#,
    ])
    func tokensAreReloadable(file: String) throws {
        let running = try load(#"{ "loaders": { "default": {} } }"#)
        #expect(try load(file).restartOnlyChange(from: running) == nil)
        #expect(running.restartOnlyChange(from: try load(file)) == nil)
    }

    @Test func tlsFilesAndClientAuthAreReloadableButNotTurningTLSOnOrOff() throws {
        let running = try load(#"{ "tls": { "certificateFile": "a.pem", "keyFile": "a.key" } }"#)
        let next = try load(
            #"{ "tls": { "certificateFile": "b.pem", "keyFile": "b.key", "clientCAFile": "ca.pem", "clientAuth": "required" } }"#
        )
        #expect(next.restartOnlyChange(from: running) == nil)
        #expect(try load("{}").restartOnlyChange(from: running) == "tls.certificateFile")
    }

    @Test func aFlagOverTheFileKeepsItsValueAcrossAReload() throws {
        // As at start: the flag wins over the file, so editing the file's port changes nothing.
        let running = try load(#"{ "listeners": { "port": 7000 } }"#, arguments: ["--config", "c.json", "--port", "0"])
        let next = try load(#"{ "listeners": { "port": 9000 } }"#, arguments: ["--config", "c.json", "--port", "0"])
        #expect(next.listeners.port == 0)
        #expect(next.restartOnlyChange(from: running) == nil)
    }
}
