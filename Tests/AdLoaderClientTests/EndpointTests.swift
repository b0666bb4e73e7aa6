import AdLoaderClient
import Testing

@Suite struct EndpointTests {
    @Test(arguments: [
        ("127.0.0.1:7411", Endpoint.tcp(host: "127.0.0.1", port: 7411)),
        ("localhost:1", .tcp(host: "localhost", port: 1)),
        ("[::1]:7411", .tcp(host: "::1", port: 7411)), ("unix:/run/adloaderd.sock", .unix(path: "/run/adloaderd.sock")),
    ])
    func parses(text: String, endpoint: Endpoint) throws {
        #expect(try Endpoint(parsing: text) == endpoint)
        #expect(try Endpoint(parsing: endpoint.description) == endpoint)
    }

    @Test(arguments: ["", "host", ":7411", "host:", "host:0", "host:65536", "host:x", "unix:"])
    func rejects(text: String) {
        #expect(throws: AdLoaderClientError.self) { try Endpoint(parsing: text) }
    }

    @Test func defaultIsTheDaemonsDefault() {
        #expect(Endpoint.default == .tcp(host: "127.0.0.1", port: 7411))
    }
}
