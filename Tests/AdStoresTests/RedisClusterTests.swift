import AdLoaderCore
import AdLoaderTLS
import AdLoaderUV
import Foundation
import Testing

@testable import AdStores

/// The Redis store against a real three-master Redis Cluster with a replica per master,
/// started on loopback: calls go to each device's slot master (the slot map read with
/// CLUSTER SLOTS), a device's two keys share a slot, MOVED after a failover is followed,
/// and a killed master's slots are found again on its promoted replica.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedisClusterTests {
    static let now = AdInstant(unixMilliseconds: 1_796_119_200_000)

    static func key(_ device: String) -> CapKey {
        CapKey(
            loader: "l", deviceID: device, sessionID: "s", day: LocalDay(at: now, utcOffsetSeconds: 0),
            utcOffsetSeconds: 0)
    }

    /// Our slot function agrees with Redis' for ids with braces, empty tags and multibyte text.
    @Test func slotsMatchRedis() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let node = cluster.nodes[0]
        for key in [
            "a", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{}x", "ünï{cödé}",
            "t:{1:l:3:a}b}:d:x",
        ] {
            #expect(try node.cli(["CLUSTER", "KEYSLOT", key]) == String(RedisSlot.of(key)), "\(key)")
        }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: node.port)
        let dayKey = store.dayKey(Self.key("d"))
        let sessionKey = store.sessionKey(Self.key("d"))
        #expect(try node.cli(["CLUSTER", "KEYSLOT", dayKey]) == (try node.cli(["CLUSTER", "KEYSLOT", sessionKey])))
    }

    @Test func callsFollowTheSlotMapAFailoverAndAKilledMaster() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(
            port: cluster.nodes[0].port, timeout: .milliseconds(300), reconnectInterval: .milliseconds(200),
            cluster: true)
        // A second store whose slot map goes stale across the failover: it must follow MOVED.
        let stale = loop.open(
            port: cluster.nodes[1].port, timeout: .milliseconds(300), reconnectInterval: .milliseconds(200),
            cluster: true)
        // Twenty devices: every call answers, and they spread over the three masters.
        var masters = Set<String>()
        for i in 0..<20 {
            let key = Self.key("device-\(i)")
            #expect(loop.call(store, key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
            if let node = store.node(for: key) { masters.insert(node) }
        }
        #expect(masters.count == 3, "\(masters)")
        #expect(store.slotMapReads == 1)
        #expect(store.redirections == 0)
        let key = Self.key("device-0")
        #expect(loop.call(stale, key, at: Self.now) == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(stale.node(for: key) == store.node(for: key))

        // A manual failover of the node holding device-0's slot. The old master pauses writes
        // while it hands over (Redis' manual failover), so calls may time out for a moment; the
        // failure makes the store read the slot map again, which names the new master.
        guard let master = store.node(for: key).flatMap(RedisAddress.init(parsing:)),
            let replica = try cluster.replica(of: master.port), let oldMaster = cluster.node(port: master.port)
        else { throw StoreTestFailure("no master or replica for device-0") }
        #expect(try replica.cli(["CLUSTER", "FAILOVER"]) == "OK")
        try cluster.waitUntil("the replica is master") { try replica.cli(["ROLE"]).hasPrefix("master") }
        try cluster.waitUntil("the old master is a replica") { try oldMaster.cli(["ROLE"]).hasPrefix("slave") }
        let afterFailover = try callUntilAnswered(loop, store, key)
        #expect(afterFailover.counts == AppOpenCounts(session: 2, day: 2))
        #expect(store.node(for: key) == "127.0.0.1:\(replica.port)")

        // Once the old master takes writes again it answers MOVED: the stale store follows it.
        try cluster.waitUntil("the old master answers MOVED") {
            try oldMaster.cli(["SET", store.dayKey(key) + ":probe", "x"]).hasPrefix("MOVED")
        }
        #expect(stale.node(for: key) == master.description)
        #expect(loop.call(stale, key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 3, day: 3)))
        #expect(stale.redirections >= 1)
        #expect(stale.node(for: key) == "127.0.0.1:\(replica.port)")

        // Kill the new master: calls for its slots fail (quickly) until the cluster promotes
        // its replica; the store then finds the slot there. Other masters' devices answer throughout.
        // The other device is one whose slot the new master itself refuses (MOVED elsewhere): the
        // store's map may still be partly stale after the failover (a slot-map read during the
        // hand-over can predate it), so it cannot choose. One call settles the store's route.
        let other = try (1..<20).map { Self.key("device-\($0)") }.first {
            try replica.cli(["GET", store.dayKey($0)]).hasPrefix("MOVED")
        }.map { device in
            #expect(loop.call(store, device, at: Self.now) == .success(AppOpenCounts(session: 1, day: 1)))
            return device
        }
        guard let other, store.node(for: other) != "127.0.0.1:\(replica.port)" else {
            throw StoreTestFailure("no device on another master (\(String(describing: other)))")
        }
        replica.stop()
        let afterKill = try callUntilAnswered(loop, store, key, alsoCalling: other)
        // Replication is asynchronous, but the show acknowledged before had long reached the replica.
        #expect(afterKill.counts == AppOpenCounts(session: 4, day: 4))
        #expect(afterKill.failures > 0)
        #expect(store.node(for: key) == master.description)
    }

    /// The same cluster over TLS (`tls-cluster yes`, `tls-replication yes`, TLS ports only): the
    /// slot map names the TLS ports, every node's connection is a TLS one, calls spread over
    /// the three masters and the counts are in the slot's master.
    @Test func overTLSCallsReachEverySlotMaster() throws {
        let certificates = try TestCertificates()
        let cluster = try RedisCluster(tls: certificates)
        defer { cluster.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let tls = try TLSClientContext(TLSClientConfiguration(caFile: certificates.caFile))
        let store = loop.open(
            port: cluster.nodes[0].port, timeout: .seconds(2), reconnectInterval: .milliseconds(200), cluster: true,
            tls: tls)
        var masters = Set<String>()
        for i in 0..<20 {
            let key = Self.key("device-\(i)")
            #expect(loop.call(store, key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
            #expect(loop.call(store, key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 2, day: 2)))
            if let node = store.node(for: key) { masters.insert(node) }
        }
        #expect(masters.count == 3, "\(masters)")
        #expect(store.slotMapReads == 1 && store.redirections == 0)
        let key = Self.key("device-0")
        let master = try #require(store.node(for: key).flatMap(RedisAddress.init(parsing:)))
        #expect(cluster.node(port: master.port) != nil, "the slot map names a node's TLS port: \(master)")
        #expect(try cluster.node(port: master.port)?.cli(["GET", store.dayKey(key)]) == "2")
    }

    /// Confirms a show for `key` every 100 ms (the store's clock advancing with the wall clock,
    /// so its retry intervals pass) until it answers, at most 30 s; `alsoCalling`'s device must
    /// answer at every round.
    func callUntilAnswered(
        _ loop: StoreLoop, _ store: RedisCapStore, _ key: CapKey, alsoCalling other: CapKey? = nil
    ) throws -> (counts: AppOpenCounts, failures: Int) {
        var failures = 0
        let began = Date()
        while Date().timeIntervalSince(began) < 30 {
            let now = Self.now + .milliseconds(Int64(Date().timeIntervalSince(began) * 1_000))
            if let other {
                let answer = loop.call(store, other, at: now)
                #expect((try? answer?.get()) != nil, "another master's device failed: \(String(describing: answer))")
            }
            let answer = loop.call(store, key, at: now, confirm: true)
            if case .success(let counts) = answer { return (counts, failures) }
            failures += 1
            usleep(100_000)
        }
        throw StoreTestFailure("no answer within 30 s")
    }
}
