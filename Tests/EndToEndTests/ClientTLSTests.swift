import AdLoaderClient
import AdLoaderCore
import Foundation
import Testing

extension EndToEnd {
    /// The Swift client over TLS against the real daemon, certificates made by `openssl` here.
    @Suite("AdLoaderClient over TLS", .serialized, .timeLimit(.minutes(2)))
    struct ClientTLSTests {
        /// A CA and a server certificate for 127.0.0.1 and localhost (EC P-256), in a fresh directory.
        struct Certificates {
            let directory: URL
            var ca: String { directory.appendingPathComponent("ca.pem").path }
            var certificate: String { directory.appendingPathComponent("server.pem").path }
            var key: String { directory.appendingPathComponent("server.key").path }
            var otherCA: String { directory.appendingPathComponent("other-ca.pem").path }

            init() throws {
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("adloader-tls-\(UUID())")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
                for name in ["ca", "other-ca"] {
                    try openssl(
                        ["req", "-x509"] + ec + [
                            "-keyout", "\(name).key", "-out", "\(name).pem", "-days", "2", "-subj",
                            "/CN=\(name)",
                        ])
                }
                try openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=adloaderd"])
                try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
                    to: directory.appendingPathComponent("server.ext"), atomically: true, encoding: .utf8)
                try openssl([
                    "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                    "server.pem", "-days", "2", "-extfile", "server.ext",
                ])
            }

            func openssl(_ arguments: [String]) throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
                process.arguments = arguments
                process.currentDirectoryURL = directory
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw DaemonError("openssl \(arguments) failed") }
            }
        }

        @Test func pipelinedCallsFromManyTasksOverOneTLSConnection() async throws {
            let certificates = try Certificates()
            defer { try? FileManager.default.removeItem(at: certificates.directory) }
            // 200 calls may be in flight at once (borrows parked on an empty pool): above the default 128.
            let daemon = try DaemonProcess([
                "--tls-cert", certificates.certificate, "--tls-key", certificates.key, "--max-calls-in-flight", "400",
            ])
            let client = try AdLoaderClient.connect(
                to: .tcp(host: "127.0.0.1", port: daemon.port), tls: ClientTLS(caFile: certificates.ca))
            defer { client.close() }
            // 200 tasks borrow and return at once: records sealed by many writers, opened by the reader.
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let result = try await client.borrow(adUnitID: "tls-\(index % 4)", wait: .seconds(5))
                        guard case .leased(let lease, _) = result else { return false }
                        return try await client.returnLease(lease.id, shown: false) == .backInPool
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.count == 200 && outcomes.allSatisfy { $0 })
            let pools = try await client.stats()
            #expect(pools.filter { $0.adUnitID.hasPrefix("tls-") }.allSatisfy { $0.leased == 0 })
            // The name checked is the server name given; another CA is refused before any call.
            let byName = try AdLoaderClient.connect(
                to: .tcp(host: "127.0.0.1", port: daemon.port),
                tls: ClientTLS(caFile: certificates.ca, serverName: "localhost"))
            #expect(try await byName.serverInfo().version.isEmpty == false)
            byName.close()
            #expect {
                _ = try AdLoaderClient.connect(
                    to: .tcp(host: "127.0.0.1", port: daemon.port), tls: ClientTLS(caFile: certificates.otherCA))
            } throws: { error in
                (error as? AdLoaderClientError)?.code == .tlsFailed
                    && "\(error)".contains("unable to get local issuer certificate")
            }
            #expect {
                _ = try AdLoaderClient.connect(to: .unix(path: "/tmp/none.sock"), tls: ClientTLS())
            } throws: { error in (error as? AdLoaderClientError)?.code == .invalidEndpoint }
        }
    }
}
