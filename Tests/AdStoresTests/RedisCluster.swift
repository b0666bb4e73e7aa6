import Foundation

/// A Redis Cluster the test starts on loopback: `masters` masters with one replica each
/// (`redis-server --cluster-enabled yes`, `redis-cli --cluster create --cluster-replicas 1`),
/// node timeout 1 s so that a killed master's replica takes over within seconds.
///
/// With `tls`, every node listens on its TLS port only (`--port 0`), the cluster bus and
/// replication run TLS too (`tls-cluster`, `tls-replication`), and `CLUSTER SLOTS` names the
/// TLS ports.
final class RedisCluster {
    let directory: String
    let tls: TestCertificates?
    private(set) var nodes: [RedisServer] = []

    /// Starts the cluster; a port taken between the check and the bind (other suites start
    /// servers in parallel) fails a start: up to three attempts, each on fresh ports.
    convenience init(masters: Int = 3, tls: TestCertificates? = nil) throws {
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                try self.init(masters: masters, tls: tls, attempt: ())
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? RedisServer.RedisServerError(message: "redis cluster did not start")
    }

    private init(masters: Int, tls: TestCertificates?, attempt: Void) throws {
        self.tls = tls
        directory = NSTemporaryDirectory() + "redis-cluster-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            for _ in 0..<(masters * 2) {
                let port = try Self.clusterPort()
                // A directory per node: a replica's full sync writes dump.rdb in its directory.
                let nodeDirectory = "\(directory)/\(port)"
                try FileManager.default.createDirectory(atPath: nodeDirectory, withIntermediateDirectories: true)
                nodes.append(
                    try RedisServer(
                        port: port,
                        extraArguments: [
                            "--cluster-enabled", "yes", "--cluster-config-file", "\(nodeDirectory)/nodes.conf",
                            "--cluster-node-timeout", "1000", "--dir", nodeDirectory,
                            // A master's failure leaves the other masters' slots serving (the default,
                            // yes, fails every slot until the election ends): OPERATIONS.md advises it.
                            "--cluster-require-full-coverage", "no",
                        ] + (tls == nil ? [] : ["--tls-cluster", "yes", "--tls-replication", "yes"]),
                        tls: tls))
            }
            let create = Process()
            create.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
            create.arguments =
                (tls?.cliArguments ?? []) + ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + [
                    "--cluster-replicas", "1", "--cluster-yes",
                ]
            let output = Pipe()
            create.standardOutput = output
            create.standardError = output
            try create.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            create.waitUntilExit()
            guard create.terminationStatus == 0 else {
                throw RedisServer.RedisServerError(message: "redis-cli --cluster create failed: \(text.suffix(500))")
            }
            try waitUntil("every node sees cluster_state:ok and every replica is in sync") {
                try nodes.allSatisfy { node in
                    let info = try node.cli(["CLUSTER", "INFO"])
                    let replication = try node.cli(["INFO", "replication"])
                    return info.contains("cluster_state:ok")
                        && (replication.contains("role:master") || replication.contains("master_link_status:up"))
                }
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    func stop() {
        for node in nodes { node.stop() }
        try? FileManager.default.removeItem(atPath: directory)
        tls?.remove()
    }

    /// The node on `port`.
    func node(port: Int) -> RedisServer? { nodes.first { $0.port == port } }

    /// The replica of the master on `port` (from each node's `INFO replication`).
    func replica(of port: Int) throws -> RedisServer? {
        try nodes.first { node in
            try node.processIdentifier != nil && node.cli(["INFO", "replication"]).contains("master_port:\(port)\r")
        }
    }

    /// Polls `condition` every 50 ms, at most 30 s (the cluster converges on its own clock).
    func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        for _ in 0..<600 {
            if (try? condition()) == true { return }
            usleep(50_000)
        }
        throw RedisServer.RedisServerError(message: "timed out waiting until \(what)")
    }

    /// A free port whose cluster bus port (port + 10000) is free too, both below the
    /// kernel's ephemeral range (32768...), where other tests' servers and clients take ports.
    static func clusterPort() throws -> Int {
        for _ in 0..<1_000 {
            let port = Int.random(in: 10_000...22_000)
            if !RedisServer.accepts(port: port) && !RedisServer.accepts(port: port + 10_000) { return port }
        }
        throw RedisServer.RedisServerError(message: "no free cluster port")
    }
}
