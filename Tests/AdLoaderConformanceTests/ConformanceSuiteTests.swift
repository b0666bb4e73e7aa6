import AdLoaderWire
import Glibc
import Testing

@testable import AdLoaderConformance

/// What can be checked without a server: the check list, the envelopes the suite builds,
/// and that an endpoint that is absent or silent fails checks within bounded time.
@Suite struct ConformanceSuiteTests {
    @Test func checkNamesAreUniqueAndCoverTheProtocol() {
        let names = ConformanceSuite.checkNames
        #expect(Set(names).count == names.count)
        for required in [
            "preface.answered", "borrow.slot-affinity", "call.duplicate-call-id", "borrow.cancel-parked",
            "borrow.deadline-exceeded", "watch.events-until-cancel", "pipeline.borrow-return-pairs",
            "abuse.oversize-length-prefix", "abuse.bad-preface", "abuse.compressed-flag", "abuse.garbage-envelope",
        ] {
            #expect(names.contains(required), "\(required)")
        }
    }

    /// Driven by the method list: every method has a check making an OK call of it, and
    /// that check runs on both transports.
    @Test func everyMethodHasARoundTripCheckOnBothTransports() {
        #expect(Set(ConformanceSuite.roundTripChecks.keys) == Set(MethodName.all))
        for (method, check) in ConformanceSuite.roundTripChecks {
            #expect(ConformanceSuite.checkNames.contains(check), "\(method): \(check)")
            #expect(ConformanceSuite.transportNeutralChecks.contains(check), "\(method): \(check) runs on gRPC too")
        }
        for check in ConformanceSuite.transportNeutralChecks {
            #expect(ConformanceSuite.checkNames.contains(check), "\(check)")
        }
    }

    @Test func parsesEndpoints() {
        let v4 = ConformanceSuite(endpoint: "127.0.0.1:7411")
        #expect(v4?.host == "127.0.0.1" && v4?.port == 7411)
        let v6 = ConformanceSuite(endpoint: "[::1]:9000")
        #expect(v6?.host == "::1" && v6?.port == 9000)
        #expect(ConformanceSuite(endpoint: "localhost:1")?.host == "localhost")
        for bad in ["", "7411", "host:", ":7411", "host:0", "host:65536", "host:port"] {
            #expect(ConformanceSuite(endpoint: bad) == nil, "\(bad)")
        }
    }

    @Test(arguments: [64, 200, 16_384, 16_385, 65_536, 4 * 1024 * 1024])
    func paddedEnvelopeHasExactlyTheRequestedSize(size: Int) throws {
        let envelope = try #require(ConformanceRun.paddedStatsEnvelope(callID: 7, loader: "default", size: size))
        #expect(envelope.count == size)
        let frame = try RequestFrame(decoding: envelope)
        #expect(frame.callID == 7 && frame.method == MethodName.stats)
        // The padding is an unknown field, which decoders skip.
        let stats = try StatsRequestMessage(decoding: frame.message)
        #expect(stats.loader == "default" && stats.adUnitID.isEmpty)
    }

    @Test func onlyRunsTheSelectedChecks() throws {
        let port = try closedPort()
        var options = ConformanceSuite.Options()
        options.timeout = .milliseconds(200)
        options.only = ["abuse.", "preface"]
        var lines: [String] = []
        let report = ConformanceSuite(host: "127.0.0.1", port: port, options: options).run { lines.append($0) }
        #expect(!report.results.isEmpty)
        #expect(report.results.allSatisfy { $0.name.hasPrefix("abuse.") || $0.name.hasPrefix("preface") })
        #expect(lines.count == report.results.count + 2, "a header, one line per check, the summary")
    }

    @Test(.timeLimit(.minutes(1)))
    func anAbsentEndpointFailsEveryCheckQuickly() throws {
        let port = try closedPort()
        var options = ConformanceSuite.Options()
        options.timeout = .milliseconds(200)
        let report = ConformanceSuite(host: "127.0.0.1", port: port, options: options).run()
        #expect(!report.passed)
        for result in report.results where !result.skipped {
            #expect(!result.passed, "\(result.name)")
            #expect(result.detail.contains("cannot connect"), "\(result.name): \(result.detail)")
        }
    }

    /// A listener that never accepts nor answers: the kernel completes the handshakes, and
    /// every read must end at the suite's timeout.
    @Test(.timeLimit(.minutes(2)))
    func aSilentEndpointFailsChecksInsteadOfHanging() throws {
        let listener = try Listener()
        defer { listener.close() }
        var options = ConformanceSuite.Options()
        options.timeout = .milliseconds(100)
        options.pipelinedPairs = 10
        // Hanging instead of timing out would trip the test's time limit.
        let report = ConformanceSuite(host: "127.0.0.1", port: listener.port, options: options).run()
        #expect(!report.passed)
        let ran = report.results.filter { !$0.skipped }
        #expect(ran.count > 20)
        #expect(ran.allSatisfy { !$0.passed }, "\(ran.filter(\.passed).map(\.name))")
    }

    @Test func resolvesNamesAndReportsUnknownHosts() throws {
        var options = ConformanceSuite.Options()
        options.timeout = .milliseconds(200)
        options.only = ["preface.answered"]
        let report = ConformanceSuite(host: "no-such-host.invalid", port: 7411, options: options).run()
        #expect(report.results.count == 1)
        #expect(report.results.first?.detail.contains("cannot resolve") == true, "\(report.results)")
    }

    /// A port nothing listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let listener = try Listener()
        let port = listener.port
        listener.close()
        return port
    }
}

/// A TCP listener on 127.0.0.1 and a kernel-chosen port that never accepts.
private final class Listener {
    private var fd: Int32
    let port: Int

    struct Failure: Error {
        var operation: String
    }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(operation: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0, listen(fd, 256) == 0 else {
            _ = Glibc.close(fd)
            throw Failure(operation: "bind/listen")
        }
        var actual = sockaddr_in()
        var length = size
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    deinit { close() }
}
