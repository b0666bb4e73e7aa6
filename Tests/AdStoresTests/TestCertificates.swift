import Foundation

/// Certificates made at test time with the `openssl` command (EC P-256, one day): a CA, a
/// Redis server certificate it signed (IP 127.0.0.1 and DNS redis.test), a client certificate
/// it signed, and a second CA that signed nothing of these.
struct TestCertificates {
    let directory: String
    var caFile: String { "\(directory)/ca.pem" }
    var serverCertificate: String { "\(directory)/server.pem" }
    var serverKey: String { "\(directory)/server.key" }
    var clientCertificate: String { "\(directory)/client.pem" }
    var clientKey: String { "\(directory)/client.key" }
    var otherCAFile: String { "\(directory)/other-ca.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "redis-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        for ca in ["ca", "other-ca"] {
            try Self.openssl(
                ["req", "-x509"] + ec + [
                    "-keyout", "\(directory)/\(ca).key", "-out", "\(directory)/\(ca).pem", "-days", "1", "-subj",
                    "/CN=adloader test \(ca)",
                ])
        }
        for (name, names) in [("server", "IP:127.0.0.1,DNS:redis.test"), ("client", "DNS:adloaderd.test")] {
            try Self.openssl(
                ["req"] + ec + [
                    "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).csr", "-subj",
                    "/CN=adloader test \(name)",
                ])
            let extensions = "\(directory)/\(name).ext"
            try "subjectAltName=\(names)\n".write(toFile: extensions, atomically: true, encoding: .utf8)
            try Self.openssl([
                "x509", "-req", "-in", "\(directory)/\(name).csr", "-CA", caFile, "-CAkey", "\(directory)/ca.key",
                "-CAcreateserial", "-out", "\(directory)/\(name).pem", "-days", "1", "-extfile", extensions,
            ])
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// redis-server's TLS arguments: TLS only (`--port 0`), on `port`; client certificates
    /// not asked for unless `extraArguments` say `--tls-auth-clients yes` (later arguments win).
    func serverArguments(port: Int) -> [String] {
        [
            "--port", "0", "--tls-port", String(port), "--tls-cert-file", serverCertificate, "--tls-key-file",
            serverKey, "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no",
        ]
    }

    /// redis-cli's TLS arguments (with the client certificate, so that it passes either way).
    var cliArguments: [String] {
        ["--tls", "--cacert", caFile, "--cert", clientCertificate, "--key", clientKey]
    }

    private static func openssl(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        p.standardError = errors
        try p.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw RedisServer.RedisServerError(message: "openssl \(arguments.first ?? ""): \(text)")
        }
    }
}
