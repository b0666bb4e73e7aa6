import AdLoaderHTTP
import AdLoaderUV
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The curl client on a real loop, against loopback ports nothing listens on (the exchange
/// stub of Tests/python covers real answers, faults, keep-alive and notices).
@Suite(.serialized) struct CurlHTTPClientTests {
    /// A loopback port that refuses: bound, never listened on, closed.
    static func refusingPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends `requests` on a fresh loop and runs it until every one completed.
    static func run(
        _ requests: [HTTPRequest], configuration: CurlHTTPClient.Configuration = .init(),
        closeEarly: Bool = false
    ) throws -> [Result<HTTPResponse, HTTPError>?] {
        let loop = try UVLoop()
        let client = try CurlHTTPClient(loop: loop, configuration: configuration)
        var results = [Result<HTTPResponse, HTTPError>?](repeating: nil, count: requests.count)
        var left = requests.count
        var calledInside = false
        var sending = true
        for (index, request) in requests.enumerated() {
            client.send(request) { result in
                if sending { calledInside = true }
                results[index] = result
                left -= 1
                if left == 0 { client.close() }
            }
        }
        sending = false
        #expect(!calledInside, "completion never runs inside send")
        if closeEarly { client.close() }
        loop.run()
        #expect(left == 0)
        #expect(client.watchedSocketCount == 0 && client.runningCount == 0)
        try loop.close()
        return results
    }

    @Test func refusedConnectionIsConnectionFailed() throws {
        let url = "http://127.0.0.1:\(Self.refusingPort())/openrtb2/auction"
        let results = try Self.run(
            (0..<3).map { _ in HTTPRequest(method: .post, url: url, body: Array("{}".utf8)) })
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(String(describing: result))")
                continue
            }
            #expect(error.code == .connectionFailed)
        }
    }

    @Test func badURLsAreBadRequests() throws {
        let results = try Self.run([HTTPRequest(url: "gopher://x/"), HTTPRequest(url: "http://[::1")])
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                continue
            }
            #expect(error.code == .badRequest || error.code == .transport, "\(error)")
        }
    }

    @Test func beyondTheQueueRequestsFailAtOnceAndCloseCancelsTheRest() throws {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maximumConcurrentRequests = 1
        configuration.maximumQueuedRequests = 2
        let url = "http://127.0.0.1:\(Self.refusingPort())/"
        let results = try Self.run(
            (0..<5).map { _ in HTTPRequest(url: url) }, configuration: configuration, closeEarly: true)
        let codes = results.map { result -> HTTPError.Code? in
            if case .failure(let error) = result { error.code } else { nil }
        }
        #expect(codes[3] == .transport && codes[4] == .transport, "over the queue: refused at once")
        #expect(codes[0...2].allSatisfy { $0 == .cancelled }, "closed before they ran")
    }
}
