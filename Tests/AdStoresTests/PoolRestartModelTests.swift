import AdLoaderCore
import AdLoaderTestSupport
import AdStores
import Foundation
import Testing

/// Model-based test with restarts as a step: seeded random sequences of borrows (with and
/// without slots), shown and unshown Returns, source answers, time advances, and restarts,
/// either a crash (the loader is dropped as it is; the next one replays the pool journal the
/// loader's events were written to) or a clean stop (suspend, restore the snapshots). The
/// invariant, checked after every step: an ad is leased by at most one lease, across
/// restarts; and every lease open before a restart whose end has not passed is back after it
/// (a Borrow of its slot answers REUSED with it, its Return works).
struct PoolRestartModelTests {
    static let sequences = 300

    /// A context that keeps its ad's number across a restart.
    final class NumberContext: AdSourceContext {
        let number: Int
        init(number: Int) { self.number = number }
        var snapshotState: [UInt8]? { Array("\(number)".utf8) }
    }

    /// Answers by hand; a restart forgets what was asked (the upstream answers are lost).
    final class Source: DemandSource {
        var pending: [(count: Int, completion: (Result<[DeliveredAd], UpstreamError>) -> Void)] = []
        var served = 0
        var shown: [String: Int] = [:]

        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {
            pending.append((count, completion))
        }

        func succeed(_ index: Int) {
            let request = pending.remove(at: index)
            let ads = (0..<request.count).map { _ in
                served += 1
                return DeliveredAd(
                    creative: .native(NativeAdContent(headline: "ad \(served)")), context: NumberContext(number: served)
                )
            }
            request.completion(.success(ads))
        }

        func adShown(_ ad: Ad) { shown[ad.id, default: 0] += 1 }

        func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? {
            Int(String(decoding: state, as: UTF8.self)).map(NumberContext.init)
        }
    }

    /// One run: a loader on a manual clock, its journal in a temporary directory.
    final class Run {
        let clock = ManualClock()
        let directory: String
        var source = Source()
        var loader: NativeAdvertisementLoader
        var journal: PoolJournal
        var token: ObserverToken?
        let configuration: LoaderConfiguration
        /// ad id -> (lease id, slot, end): the leases the model holds open.
        var open: [String: (lease: UInt64, slot: String?, end: AdInstant)] = [:]
        var violations: [String] = []
        var restarts = 0
        var reused = 0
        var seed: UInt64

        init(seed: UInt64) throws {
            self.seed = seed
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var configuration = LoaderConfiguration(name: LoaderConfiguration.defaultName)
            configuration.source = "fake"
            configuration.sizing = .fixed
            configuration.maximumRetainedAdvertisements = 6
            configuration.numberOfAdvertisements = 3
            configuration.maximumConcurrentRequests = 100
            configuration.minimumRemainingLife = .zero
            configuration.lifetime = .seconds(120)
            configuration.leaseTimeout = .seconds(30)
            self.configuration = configuration
            let clock = self.clock
            journal = PoolJournal(path: directory + "/pools.journal") { clock.now }
            loader = try Self.makeLoader(configuration, source: source, clock: clock, seed: seed)
            try journal.checkpoint([])
            attach()
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        static func makeLoader(
            _ configuration: LoaderConfiguration, source: Source, clock: ManualClock, seed: UInt64
        ) throws -> NativeAdvertisementLoader {
            try NativeAdvertisementLoader(
                loaders: [configuration], sources: ["fake": source], budgets: [:], clock: clock, scheduler: clock,
                idSeed: seed)
        }

        /// What the daemon does: every event into the journal, committed before each answer.
        func attach() {
            let journal = self.journal
            token = loader.addObserver { event in
                if let record = PoolJournalRecord(event) { journal.record(record) }
            }
        }

        func flag(_ message: String) { violations.append(message) }

        func borrow(slot: String?) throws {
            let outcome = try loader.borrow(adUnitID: "unit", slot: slot, whenServed: { _ in })
            journal.commit()  // the answer leaves after this
            guard case .answered(.leased(let lease, let wasReused)) = outcome else { return }
            if wasReused {
                reused += 1
                // (The model forgets a lease at its end; the loader may still hold one whose end
                // a crash moved later, never a lease of another ad.)
                if let held = open[lease.ad.id], held.lease != lease.id {
                    flag("REUSED lease \(lease.id) for \(lease.ad.id), which lease \(held.lease) holds")
                }
                open[lease.ad.id] = (lease.id, slot, lease.expiresAt)
                return
            }
            if let held = open[lease.ad.id] {
                flag("ad \(lease.ad.id) lent under lease \(lease.id) while lease \(held.lease) is open")
            }
            open[lease.ad.id] = (lease.id, slot, lease.expiresAt)
        }

        func returnLease(pick: Int, shown: Bool) {
            guard !open.isEmpty else { return }
            let (ad, held) = open.sorted { $0.key < $1.key }[pick % open.count]
            do {
                _ = try loader.returnLease(held.lease, shown: shown)
                open[ad] = nil
            } catch {
                if held.end > clock.now { flag("Return of open lease \(held.lease) (\(ad)): \(error)") }
                open[ad] = nil
            }
            journal.commit()
        }

        func advance(milliseconds: Int64) {
            clock.advance(by: .milliseconds(milliseconds))
            journal.commit()
            // Leases whose end passed were reclaimed: their ads may be lent again.
            open = open.filter { $0.value.end > clock.now }
        }

        func answer(pick: Int) {
            guard !source.pending.isEmpty else { return }
            source.succeed(pick % source.pending.count)
            journal.commit()
        }

        /// A crash (the loader dropped as it is, the journal replayed) or a clean stop.
        func restart(crash: Bool) throws {
            restarts += 1
            let snapshots: [PoolSnapshot]
            if crash {
                // Anything noted but not committed is lost with the process: no answer carried it.
                // The dead process does nothing more (its timers still run on the shared clock).
                if let token { loader.removeObserver(token) }
                journal.close()
                snapshots = try #require(try PoolJournal.read(path: journal.path)).snapshots(
                    leasesEndNoEarlierThan: clock.now + .milliseconds(500) + configuration.leaseTimeout)
            } else {
                journal.commit()
                if let token { loader.removeObserver(token) }
                snapshots = loader.suspend()
                journal.close()
            }
            clock.advance(by: .milliseconds(500))
            source = Source()
            loader = try Self.makeLoader(configuration, source: source, clock: clock, seed: seed &+ UInt64(restarts))
            loader.restoreSuspension(snapshots)
            let clock = self.clock
            journal = PoolJournal(path: journal.path) { clock.now }
            try journal.checkpoint(loader.snapshot())
            attach()
            open = open.filter { $0.value.end > clock.now }
            // Every open lease is back: its ad is held under that lease.
            let held = Dictionary(
                loader.snapshot().flatMap(\.leases).map { ($0.pooled.ad.id, $0.leaseID) },
                uniquingKeysWith: { a, _ in a })
            for (ad, lease) in open where held[ad] != lease.lease {
                flag("after restart \(restarts) (\(crash ? "crash" : "clean")): lease \(lease.lease) of \(ad) not back")
            }
        }
    }

    @Test func anAdIsLeasedByAtMostOneLeaseAcrossRestarts() throws {
        var restarts = 0
        var reused = 0
        var leases = 0
        for index in 0..<Self.sequences {
            let seed = UInt64(index) &* 0x9E37_79B9 &+ 23
            var random = SeededRandom(seed: seed)
            let run = try Run(seed: seed)
            var steps: [String] = []
            for _ in 0..<120 {
                let roll = random.below(100)
                switch roll {
                case 0..<35:
                    let slot = random.below(3) == 0 ? nil : "slot-\(random.below(6))"
                    steps.append("borrow(\(slot ?? "-"))")
                    try run.borrow(slot: slot)
                case 35..<55:
                    let shown = random.below(2) == 0
                    steps.append("return(shown: \(shown))")
                    run.returnLease(pick: random.below(8), shown: shown)
                case 55..<75:
                    steps.append("answer")
                    run.answer(pick: random.below(4))
                case 75..<90:
                    let ms = Int64(random.below(20_000))
                    steps.append("advance(\(ms))")
                    run.advance(milliseconds: ms)
                default:
                    let crash = random.below(3) != 0
                    steps.append(crash ? "crash" : "clean restart")
                    try run.restart(crash: crash)
                }
                if !run.violations.isEmpty { break }
            }
            restarts += run.restarts
            reused += run.reused
            leases += run.open.count
            if let first = run.violations.first {
                Issue.record("seed \(seed): \(first)\nsteps: \(steps.joined(separator: ", "))")
                return
            }
        }
        // Passing proves little unless restarts happened with leases open and came back.
        #expect(restarts > Self.sequences * 5 && reused > 100, "restarts \(restarts), reused \(reused)")
    }
}

/// SplitMix64: the same sequence for the same seed.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
