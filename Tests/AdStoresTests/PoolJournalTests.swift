import AdLoaderCore
import AdStores
import Foundation
import Testing

/// The pool journal: changes replay into the pools they describe, a checkpoint holds the
/// whole state, and a file cut or overwritten by a crash is read up to its last whole frame,
/// never in part.
struct PoolJournalTests {
    static let at = AdInstant(unixMilliseconds: 1_780_000_000_000)

    static func ad(_ id: String, unit: String = "feed", life: Duration = .seconds(3600)) -> Ad {
        Ad(
            id: id, adUnitID: unit, loader: "default", creative: .native(NativeAdContent(headline: "h-\(id)")),
            loadedAt: at, expiresAt: at + life)
    }

    static func arrived(_ ad: Ad, consentClass: String = "default", context: [UInt8]? = nil) -> PoolJournalRecord {
        .arrived(consentClass: consentClass, record: StoreRecordCodec.encode(ad, context: context))
    }

    /// A journal in a temporary directory whose clock the test moves.
    final class Fixture {
        let directory: String
        let path: String
        var now = PoolJournalTests.at
        /// Signalled by a compaction's thread when it is done (the daemon's `uv_async_send`).
        let woken = DispatchSemaphore(value: 0)
        lazy var journal = PoolJournal(
            path: path, now: { [unowned self] in self.now }, wake: { [woken] in woken.signal() })

        init() {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
                .path
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            path = directory + "/pools.sqlite.journal"
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func bytes() -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
    }

    @Test func changesReplayIntoPoolsLeasesAndShowCounts() throws {
        let fixture = Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        journal.record(Self.arrived(Self.ad("a1"), context: [1, 2, 3]))
        journal.record(Self.arrived(Self.ad("a2")))
        journal.record(Self.arrived(Self.ad("b1", unit: "other"), consentClass: "limited"))
        journal.record(.leased(adID: "a1", leaseID: 7, slot: "cell/1", expiresAt: Self.at + .seconds(300)))
        journal.record(.leased(adID: "a2", leaseID: 8, slot: nil, expiresAt: Self.at + .seconds(300)))
        journal.commit()
        fixture.now = Self.at + .seconds(10)
        journal.record(.returned(leaseID: 8, shown: true))
        journal.record(.removed(adID: "b1"))
        journal.record(.arrived(consentClass: "default", record: [0xFF]))  // does not decode
        journal.record(.returned(leaseID: 99, shown: false))  // never lent
        journal.commit()
        journal.close()

        let replay = try #require(try PoolJournal.read(path: fixture.path))
        #expect(replay.frames == 2)  // a checkpoint of no pools writes no frame
        #expect(replay.cutBytes == 0)
        #expect(replay.adCount == 2 && replay.leaseCount == 1)
        #expect(replay.unreadableAds == 1 && replay.unknownRecords == 1)
        #expect(replay.lastWrittenAt == Self.at + .seconds(10))
        #expect(replay.snapshots().first?.leases.first?.expiresAt == Self.at + .seconds(300))
        let pools = replay.snapshots(leasesEndNoEarlierThan: Self.at + .seconds(340))
        #expect(pools.count == 1)
        let feed = try #require(pools.first)
        #expect(feed.adUnitID == "feed" && feed.consentClass == "default" && feed.format == .native)
        #expect(feed.ads.map(\.ad.id) == ["a2"])
        #expect(feed.ads.first?.ad.showCount == 1)
        #expect(feed.leases.map(\.leaseID) == [7])
        #expect(feed.leases.first?.slot == "cell/1")
        #expect(feed.leases.first?.pooled.sourceState == [1, 2, 3])
        // A renewal the journal did not see may have moved the end up to the restart plus the timeout.
        #expect(feed.leases.first?.expiresAt == Self.at + .seconds(340))
        #expect(
            replay.snapshots(leasesEndNoEarlierThan: Self.at + .seconds(7200)).first?.leases.first?.expiresAt
                == Self.at + .seconds(3600), "never after the ad's expiry")
    }

    @Test func aCheckpointHoldsTheWholeStateAndReplacesTheJournal() throws {
        let fixture = Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        journal.record(Self.arrived(Self.ad("gone")))
        journal.commit()
        var snapshot = PoolSnapshot(
            loader: "default", adUnitID: "feed", format: .native, takenAt: Self.at,
            ads: [.init(ad: Self.ad("a1"), sourceState: [9])],
            leases: [
                .init(leaseID: 5, slot: "s", expiresAt: Self.at + .seconds(60), pooled: .init(ad: Self.ad("a2")))
            ],
            demand: .init(
                averageRate: 0, slowRate: 0, windowStart: Self.at, windowCount: 0, latencyMilliseconds: 0,
                adsPerRequest: nil))
        snapshot.consentClass = "limited"
        try journal.checkpoint([snapshot])
        journal.record(.returned(leaseID: 5, shown: false))
        journal.commit()
        journal.close()
        let replay = try #require(try PoolJournal.read(path: fixture.path))
        let pools = replay.snapshots()
        #expect(pools.count == 1)
        #expect(pools.first?.consentClass == "limited")
        #expect(Set(pools.first?.ads.map(\.ad.id) ?? []) == ["a1", "a2"])
        #expect(pools.first?.ads.first { $0.ad.id == "a1" }?.sourceState == [9])
        #expect(pools.first?.leases.isEmpty == true)
        #expect(!FileManager.default.fileExists(atPath: fixture.path + ".new"))
    }

    /// Every cut of the last frame, and a byte flipped in it: the replay keeps the frames
    /// before it whole and reports the rest.
    @Test func aFrameCutOrDamagedByACrashEndsTheReplayThere() throws {
        let fixture = Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        journal.record(Self.arrived(Self.ad("a1")))
        journal.commit()
        let whole = fixture.bytes().count
        journal.record(Self.arrived(Self.ad("a2")))
        journal.record(.leased(adID: "a1", leaseID: 3, slot: nil, expiresAt: Self.at + .seconds(60)))
        journal.commit()
        journal.close()
        let bytes = fixture.bytes()
        for cut in whole..<bytes.count {
            let replay = try PoolJournalReplay(file: Array(bytes[0..<cut]))
            #expect(replay.adCount == 1 && replay.leaseCount == 0 && replay.cutBytes == cut - whole)
        }
        for index in whole..<bytes.count {
            var damaged = bytes
            damaged[index] ^= 0x5A
            let replay = try PoolJournalReplay(file: damaged)
            #expect(replay.adCount == 1 && replay.leaseCount == 0, "byte \(index)")
        }
        let replay = try PoolJournalReplay(file: bytes)
        #expect(replay.adCount == 2 && replay.leaseCount == 1)
    }

    /// The compaction reads its journal a chunk at a time: any split of the file into pieces
    /// replays to what the whole file does, cut or damaged files included.
    @Test func aJournalFedInPiecesReplaysAsTheWholeFile() throws {
        let fixture = Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        for index in 0..<6 {
            journal.record(Self.arrived(Self.ad("a\(index)")))
            if index % 2 == 1 {
                journal.record(
                    .leased(adID: "a\(index)", leaseID: UInt64(index), slot: nil, expiresAt: Self.at + .seconds(60)))
            }
            journal.commit()
        }
        journal.close()
        let bytes = fixture.bytes()
        var damaged = bytes
        damaged[bytes.count * 2 / 3] ^= 0x5A
        for file in [bytes, Array(bytes.dropLast(5)), damaged] {
            let whole = try PoolJournalReplay(file: file)
            for pieceSize in [1, 3, 7, 64, 1_000, file.count] {
                var pieces = PoolJournalReplay()
                for start in stride(from: 0, to: file.count, by: pieceSize) {
                    try file[start..<min(file.count, start + pieceSize)].withUnsafeBytes { try pieces.feed($0) }
                }
                try pieces.finishFeeding()
                #expect(pieces.adCount == whole.adCount && pieces.leaseCount == whole.leaseCount, "\(pieceSize)")
                #expect(pieces.frames == whole.frames && pieces.cutBytes == whole.cutBytes, "\(pieceSize)")
                #expect(pieces.lastWrittenAt == whole.lastWrittenAt)
            }
        }
        var notAJournal = PoolJournalReplay()
        #expect(throws: StoreRecordError.self) {
            try Array("garbage!".utf8).withUnsafeBytes { try notAJournal.feed($0) }
        }
        var tooShort = PoolJournalReplay()
        try Array("ADL".utf8).withUnsafeBytes { try tooShort.feed($0) }
        #expect(throws: StoreRecordError.self) { try tooShort.finishFeeding() }
    }

    @Test(arguments: [[], Array("ADLJRNL0".utf8), Array("garbage".utf8), [UInt8](repeating: 0, count: 64)])
    func aFileThatIsNoJournalIsRefused(_ bytes: [UInt8]) {
        #expect(throws: StoreRecordError.self) { try PoolJournalReplay(file: bytes) }
    }

    @Test func garbageFramesNeverTrapAndNeverReadInPart() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let count = Int.random(in: 0..<200, using: &generator)
            var file = PoolJournalRecord.fileMagic
            file += (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let replay = try PoolJournalReplay(file: file)
            #expect(replay.cutBytes <= count)
        }
    }

    @Test func noJournalIsNil() throws {
        #expect(try PoolJournal.read(path: "/nonexistent-\(UUID().uuidString)/j") == nil)
    }

    /// The records the loader's events make: an ad dropped on arrival carries no ad and makes none.
    @Test func eventsMakeRecords() {
        var received = AdEvent(kind: .received, at: Self.at, loader: "default", adUnitID: "feed")
        received.adID = "x"
        #expect(PoolJournalRecord(received) == nil)
        received.ad = Self.ad("x")
        received.consentClass = "limited"
        #expect(PoolJournalRecord(received) == Self.arrived(Self.ad("x"), consentClass: "limited"))
        var leased = AdEvent(kind: .leased, at: Self.at, loader: "default", adUnitID: "feed")
        leased.adID = "x"
        leased.leaseID = 4
        leased.slot = "c"
        leased.expiresAt = Self.at + .seconds(1)
        #expect(
            PoolJournalRecord(leased) == .leased(adID: "x", leaseID: 4, slot: "c", expiresAt: Self.at + .seconds(1)))
        var expired = AdEvent(kind: .expired, at: Self.at, loader: "default", adUnitID: "feed")
        expired.adID = "x"
        #expect(PoolJournalRecord(expired) == .removed(adID: "x"))
        #expect(PoolJournalRecord(AdEvent(kind: .heldBack, at: Self.at, loader: "d", adUnitID: "f")) == nil)
    }
}

extension PoolJournalTests {
    /// A checkpoint is asked for once the appended history passes both the threshold and the
    /// last checkpoint's size, not on every write of a journal whose checkpoint is big.
    @Test func compactionIsDueOnlyWhenTheHistoryOutgrowsTheCheckpoint() throws {
        let fixture = Fixture()
        let journal = fixture.journal
        journal.compactionBytes = 100
        var due = 0
        journal.onCompactionDue = { due += 1 }
        let big = PoolSnapshot(
            loader: "default", adUnitID: "feed", format: .native, takenAt: Self.at,
            ads: (0..<20).map { .init(ad: Self.ad("c\($0)")) },
            demand: .init(
                averageRate: 0, slowRate: 0, windowStart: Self.at, windowCount: 0, latencyMilliseconds: 0,
                adsPerRequest: nil))
        let size = try journal.checkpoint([big])
        #expect(journal.checkpointBytes == size && size > 200)
        var written = 0
        while journal.fileBytes - size <= size {
            #expect(due == 0, "after \(written) bytes of history")
            journal.record(.removed(adID: "some-ad-id-\(written)"))
            journal.commit()
            written += 1
        }
        #expect(due == 1)
    }
}

/// The journal's compaction off the loop: the thread rewrites what the journal held, the loop
/// keeps writing meanwhile, and the journal it leaves holds both.
struct PoolJournalCompactionTests {
    @Test func aCompactionOffTheLoopKeepsTheFramesWrittenMeanwhileAndShrinksTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compaction-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pools.sqlite.journal"
        let woken = DispatchSemaphore(value: 0)
        var now = PoolJournalTests.at
        let journal = PoolJournal(path: path, now: { now }, wake: { woken.signal() })
        try journal.checkpoint([])
        // History: 200 ads arrive, 150 leave, 10 are lent and 5 of those come back.
        for index in 0..<200 {
            journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("a\(index)"), context: [UInt8(index % 256)]))
            journal.commit()
        }
        for index in 0..<150 { journal.record(.removed(adID: "a\(index)")) }
        for index in 150..<160 {
            journal.record(
                .leased(adID: "a\(index)", leaseID: UInt64(index), slot: "s\(index)", expiresAt: now + .seconds(60)))
        }
        for index in 150..<155 { journal.record(.returned(leaseID: UInt64(index), shown: index == 150)) }
        journal.commit()
        let before = journal.fileBytes
        #expect(journal.startCompaction())
        #expect(!journal.startCompaction(), "one at a time")
        // The loop goes on while the thread works: these frames must survive the compaction.
        now = now + .seconds(5)
        journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("late")))
        journal.record(.leased(adID: "late", leaseID: 999, slot: "s-late", expiresAt: now + .seconds(60)))
        journal.record(.removed(adID: "a199"))
        journal.commit()
        #expect(woken.wait(timeout: .now() + 30) == .success, "the compaction's thread never finished")
        let outcome = journal.finishCompaction()
        guard case .replaced(let checkpointBytes, let tailBytes, let loopTailBytes) = outcome else {
            Issue.record("not replaced: \(outcome)")
            return
        }
        #expect(tailBytes > 0 && loopTailBytes <= tailBytes)
        #expect(journal.fileBytes == checkpointBytes + tailBytes && journal.fileBytes < before / 2)
        #expect(journal.checkpointBytes == checkpointBytes && journal.checkpoints == 2)
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
        // And the journal goes on after it.
        journal.record(.returned(leaseID: 155, shown: false))
        journal.commit()
        journal.close()
        let replay = try #require(try PoolJournal.read(path: path))
        #expect(replay.cutBytes == 0 && replay.unknownRecords == 0 && replay.unreadableAds == 0)
        // 50 left of the 200, one more gone, one late arrival: 50 ads; leases 155..159 minus 155, plus 999.
        #expect(replay.adCount == 50)
        let pools = replay.snapshots()
        let leases = pools.flatMap(\.leases)
        #expect(Set(leases.map(\.leaseID)) == [156, 157, 158, 159, 999])
        let ads = pools.flatMap { $0.ads + $0.leases.map(\.pooled) }
        #expect(ads.first { $0.ad.id == "a150" }?.ad.showCount == 1)
        #expect(ads.first { $0.ad.id == "a170" }?.sourceState == [170])
        #expect(!ads.contains { $0.ad.id == "a199" || $0.ad.id == "a10" })
    }

    /// Pools the loop hands over (the loader's snapshot, small pools) are what the checkpoint
    /// holds: the thread replays nothing (the history here says otherwise and does not come
    /// back), and the frames written meanwhile follow them.
    @Test func aCompactionFromSnapshotsWritesThemAndTheFramesWrittenMeanwhile() throws {
        let fixture = PoolJournalTests.Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        for index in 0..<100 {
            journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("h\(index)")))
            journal.commit()
        }
        fixture.now = fixture.now + .seconds(1)
        var snapshot = PoolSnapshot(
            loader: "default", adUnitID: "feed", format: .native, takenAt: fixture.now,
            ads: [.init(ad: PoolJournalTests.ad("s1"), sourceState: [4, 2])],
            leases: [
                .init(
                    leaseID: 41, slot: "cell", expiresAt: fixture.now + .seconds(60),
                    pooled: .init(ad: PoolJournalTests.ad("s2")))
            ],
            demand: .init(
                averageRate: 0, slowRate: 0, windowStart: fixture.now, windowCount: 0, latencyMilliseconds: 0,
                adsPerRequest: nil))
        snapshot.consentClass = "limited"
        #expect(journal.startCompaction(from: [snapshot]))
        fixture.now = fixture.now + .seconds(1)
        journal.record(.returned(leaseID: 41, shown: true))
        journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("late"), consentClass: "limited"))
        journal.commit()
        #expect(fixture.woken.wait(timeout: .now() + 30) == .success, "the compaction's thread never finished")
        guard case .replaced(let checkpointBytes, let tailBytes, _) = journal.finishCompaction() else {
            Issue.record("not replaced")
            return
        }
        #expect(tailBytes > 0 && journal.fileBytes == checkpointBytes + tailBytes)
        journal.close()
        let replay = try #require(try PoolJournal.read(path: fixture.path))
        #expect(replay.cutBytes == 0 && replay.unknownRecords == 0 && replay.unreadableAds == 0)
        #expect(replay.lastWrittenAt == fixture.now)
        let pools = replay.snapshots()
        #expect(pools.count == 1 && pools.first?.consentClass == "limited")
        #expect(pools.first?.ads.map(\.ad.id) == ["s1", "s2", "late"])
        #expect(pools.first?.ads.first?.sourceState == [4, 2])
        #expect(pools.first?.ads.first { $0.ad.id == "s2" }?.ad.showCount == 1)
        #expect(pools.first?.leases.isEmpty == true)
    }

    /// A long history of arrivals and departures (more than half of the replay's slots empty,
    /// so it closes them up several times): what is left, its order of arrival, its leases and
    /// the leases' returns come out as they went in.
    @Test func aLongChurnReplaysToWhatIsLeftInArrivalOrder() throws {
        let fixture = PoolJournalTests.Fixture()
        let journal = fixture.journal
        try journal.checkpoint([])
        var expected: [String] = []
        for round in 0..<6 {
            for index in 0..<1000 {
                journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("r\(round)-\(index)")))
            }
            // Keep every 50th of the round; lease the kept ones of even rounds.
            for index in 0..<1000 where index % 50 != 0 { journal.record(.removed(adID: "r\(round)-\(index)")) }
            for index in stride(from: 0, to: 1000, by: 50) {
                expected.append("r\(round)-\(index)")
                if round % 2 == 0 {
                    journal.record(
                        .leased(
                            adID: "r\(round)-\(index)", leaseID: UInt64(round * 1000 + index), slot: nil,
                            expiresAt: PoolJournalTests.at + .seconds(60)))
                }
            }
            journal.commit()
        }
        // The first ad comes again: it moves to the end, its lease gone with the old copy.
        journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("r0-0")))
        expected.removeFirst()
        expected.append("r0-0")
        // Two leases come back, one shown.
        journal.record(.returned(leaseID: 2050, shown: true))
        journal.record(.returned(leaseID: 4100, shown: false))
        journal.record(.returned(leaseID: 0, shown: false))  // ended with the old copy of r0-0
        journal.commit()
        journal.close()
        let replay = try #require(try PoolJournal.read(path: fixture.path))
        #expect(replay.adCount == 120 && replay.unknownRecords == 1)
        // Leases: 20 kept ads in each of rounds 0, 2 and 4, minus r0-0's, minus two returned.
        #expect(replay.leaseCount == 57)
        let pool = try #require(replay.snapshots().first)
        let available: [String] = pool.ads.map { $0.ad.id }
        let lent: [String] = pool.leases.map { $0.pooled.ad.id }
        let leaseIDs: [UInt64] = pool.leases.map { $0.leaseID }
        #expect(Set(available + lent) == Set(expected))
        let lentSet = Set(lent)
        #expect(available == expected.filter { !lentSet.contains($0) })
        #expect(pool.ads.first { $0.ad.id == "r2-50" }?.ad.showCount == 1)
        #expect(leaseIDs.sorted() == leaseIDs)
        #expect(Set(leaseIDs).isDisjoint(with: [2050, 4100, 0]))
    }

    /// Strings read back from a record: ASCII as it is, other UTF-8 validated, and bytes that
    /// are not UTF-8 refused (never repaired into another id).
    @Test(arguments: ["", "ad-42", "café", "広告🙂", String(repeating: "x", count: 300)])
    func recordStringsComeBackAsWritten(_ text: String) throws {
        var writer = StoreRecordWriter()
        writer.string(text)
        writer.unsigned(UInt64.max)
        writer.unsigned(0x7F)
        writer.unsigned(0x80)
        var reader = StoreRecordReader(writer.bytes)
        #expect(try reader.string() == text)
        #expect(try reader.unsigned() == UInt64.max)
        #expect(try reader.unsigned() == 0x7F)
        #expect(try reader.unsigned() == 0x80)
        #expect(reader.isAtEnd)
    }

    @Test(arguments: [[0xFF], [0x61, 0xC3], [0xE0, 0x80, 0x80], [0xF0, 0x90, 0x80, 0x61]] as [[UInt8]])
    func recordStringsThatAreNotUTF8AreRefused(_ bytes: [UInt8]) {
        var reader = StoreRecordReader([UInt8(bytes.count)] + bytes)
        #expect(throws: StoreRecordError.self) { try reader.string() }
    }

    /// More frames appended after the thread's last copy than the loop copies in one pass: a
    /// thread catches up first (`.notDone`, then `wake` again) and the loop copies nothing.
    @Test func aLongTailIsCopiedByACatchUpThreadNotByTheLoop() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compaction-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pools.sqlite.journal"
        let woken = DispatchSemaphore(value: 0)
        let journal = PoolJournal(path: path, now: { PoolJournalTests.at }, wake: { woken.signal() })
        journal.loopTailLimit = 4_096
        try journal.checkpoint([])
        for index in 0..<100 {
            journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("old\(index)")))
            journal.commit()
        }
        #expect(journal.startCompaction())
        #expect(woken.wait(timeout: .now() + 30) == .success, "the compaction's thread never finished")
        // After the thread's copy: 400 frames of 1 KiB contexts, far more than the loop copies.
        let context = [UInt8](repeating: 7, count: 1_024)
        for index in 0..<400 {
            journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("new\(index)"), context: context))
            journal.commit()
        }
        #expect(journal.finishCompaction() == .notDone, "handed to a catch-up thread")
        #expect(journal.isCompacting)
        #expect(woken.wait(timeout: .now() + 30) == .success, "the catch-up thread never finished")
        guard case .replaced(let checkpointBytes, let tailBytes, let loopTailBytes) = journal.finishCompaction() else {
            Issue.record("not replaced")
            return
        }
        #expect(tailBytes > 400 * 1_024 && loopTailBytes == 0)
        #expect(journal.fileBytes == checkpointBytes + tailBytes && !journal.isCompacting)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == journal.fileBytes)
        journal.close()
        let replay = try #require(try PoolJournal.read(path: path))
        #expect(replay.cutBytes == 0 && replay.adCount == 500)
        let ads = replay.snapshots().flatMap(\.ads)
        #expect(ads.first { $0.ad.id == "new399" }?.sourceState == context)
    }

    @Test func aClosedJournalDropsTheCompactionAndKeepsTheOldFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compaction-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pools.sqlite.journal"
        let journal = PoolJournal(path: path, now: { PoolJournalTests.at })
        try journal.checkpoint([])
        journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("kept")))
        journal.commit()
        let size = journal.fileBytes
        #expect(journal.startCompaction())
        journal.close()  // joins the thread, drops its file
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == size)
        #expect(try PoolJournal.read(path: path)?.adCount == 1)
    }

    @Test func aJournalThatIsNoLongerThereFailsTheCompactionAndChangesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compaction-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pools.sqlite.journal"
        let woken = DispatchSemaphore(value: 0)
        let journal = PoolJournal(path: path, now: { PoolJournalTests.at }, wake: { woken.signal() })
        try journal.checkpoint([])
        journal.record(PoolJournalTests.arrived(PoolJournalTests.ad("kept")))
        journal.commit()
        // Garbage where the thread reads: the compaction fails, the open journal is untouched.
        let descriptorBytes = journal.fileBytes
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path + ".other"))
        try FileManager.default.moveItem(atPath: path, toPath: path + ".moved")
        try FileManager.default.moveItem(atPath: path + ".other", toPath: path)
        #expect(journal.startCompaction())
        #expect(woken.wait(timeout: .now() + 30) == .success)
        guard case .failed = journal.finishCompaction() else {
            Issue.record("a compaction of garbage succeeded")
            return
        }
        #expect(journal.fileBytes == descriptorBytes && journal.writeFailures == 1)
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
    }
}

extension PoolJournalTests {
    /// The per-call path (an event written straight into the frame) writes the very bytes the
    /// record value writes, and an event that changes nothing writes no frame at all.
    @Test func eventsWrittenStraightIntoTheFrameMatchTheirRecords() throws {
        var received = AdEvent(kind: .received, at: Self.at, loader: "default", adUnitID: "feed")
        received.ad = Self.ad("x")
        received.consentClass = "limited"
        var leased = AdEvent(kind: .leased, at: Self.at, loader: "default", adUnitID: "feed")
        leased.adID = "x"
        leased.leaseID = 4
        leased.slot = "c"
        leased.expiresAt = Self.at + .seconds(1)
        var unslotted = leased
        unslotted.slot = nil
        unslotted.leaseID = 5
        var returned = AdEvent(kind: .returned, at: Self.at, loader: "default", adUnitID: "feed")
        returned.leaseID = 4
        returned.shown = true
        var expired = AdEvent(kind: .expired, at: Self.at, loader: "default", adUnitID: "feed")
        expired.adID = "x"
        let nothing = AdEvent(kind: .heldBack, at: Self.at, loader: "d", adUnitID: "f")
        let events = [received, nothing, leased, unslotted, returned, expired]

        let direct = Fixture()
        try direct.journal.checkpoint([])
        #expect(!direct.journal.record(nothing) && !direct.journal.hasPending, "nothing noted, no frame begun")
        for event in events { direct.journal.record(event) }
        direct.journal.commit()
        direct.journal.record(returned)
        direct.journal.commit()
        let viaRecords = Fixture()
        try viaRecords.journal.checkpoint([])
        for event in events { if let record = PoolJournalRecord(event) { viaRecords.journal.record(record) } }
        viaRecords.journal.commit()
        viaRecords.journal.record(try #require(PoolJournalRecord(returned)))
        viaRecords.journal.commit()
        #expect(direct.bytes() == viaRecords.bytes())
        let replay = try #require(try PoolJournal.read(path: direct.path))
        // Lease 5 replaced lease 4 on the same ad, so both Returns of 4 name a lease no longer open.
        #expect(replay.frames == 2 && replay.cutBytes == 0 && replay.adCount == 0 && replay.unknownRecords == 2)
    }
}
