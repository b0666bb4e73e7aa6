import AdLoaderWire
import Testing

@testable import AdLoaderClient

@Suite(.timeLimit(.minutes(1))) struct EndpointSetTests {
    @Test func parsesAListAsNginxNamesItsServers() throws {
        let set = try EndpointSet(parsing: "127.0.0.1:17421, 127.0.0.1:17422,127.0.0.1:17423")
        #expect(
            set.endpoints == [
                .tcp(host: "127.0.0.1", port: 17421), .tcp(host: "127.0.0.1", port: 17422),
                .tcp(host: "127.0.0.1", port: 17423),
            ])
        #expect(set.ring.servers == ConsistentHashRingTests.servers)
        #expect(set.owner(of: "feed-1") == .tcp(host: "127.0.0.1", port: 17422))
        #expect(set.owner(of: "") == set.endpoints[0])
        #expect(set.candidates(for: "feed-1").first == set.owner(of: "feed-1"))
        #expect(Set(set.candidates(for: "feed-1")) == Set(set.endpoints))
        #expect(EndpointSet.affinityMetadataKey == "x-adloader-affinity")
    }

    @Test(arguments: [
        "", ",", "127.0.0.1:1,", "127.0.0.1:1,127.0.0.1:1", "unix:/run/a.sock", "127.0.0.1", "127.0.0.1:0",
        "127.0.0.1:1,,127.0.0.1:2",
    ])
    func refusesWithAClearError(text: String) {
        #expect(throws: AdLoaderClientError.self) { try EndpointSet(parsing: text) }
        do {
            _ = try EndpointSet(parsing: text)
        } catch {
            #expect(error.code == .invalidEndpoint && !error.message.isEmpty)
        }
    }

    /// The owner refuses connections: the client goes on along the ring, as nginx does.
    @Test func connectsToTheNextAlongTheRingWhenTheOwnerIsDown() async throws {
        let live = try FakeServer { frame, server in
            server.send(
                ResponseFrame(
                    callID: frame.callID, message: StatsResponseMessage(pools: [], instance: "live").encoded(),
                    end: true))
        }
        defer { live.stop() }
        let gone = try FakeServer { _, _ in }
        let deadPort = gone.port
        gone.stop()
        let set = try EndpointSet(names: ["127.0.0.1:\(deadPort)", "127.0.0.1:\(live.port)"])
        let key = try #require((0..<1000).map { "feed-\($0)" }.first { set.owner(of: $0) == set.endpoints[0] })
        let client = try AdLoaderClient.connect(to: set, affinityKey: key)
        defer { client.close() }
        #expect(client.endpoint == set.endpoints[1])
        #expect(try await client.statsResponse(timeout: .seconds(5)).instance == "live")
        // Nothing reachable: one error naming every endpoint tried.
        let none = try EndpointSet(names: ["127.0.0.1:\(deadPort)"])
        #expect(throws: AdLoaderClientError.self) { try AdLoaderClient.connect(to: none, affinityKey: key) }
    }
}
