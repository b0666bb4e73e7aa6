import Foundation
import Testing

@testable import AdLoaderFuzz

/// Every committed corpus input (seeds and the reproducers of past findings) and every seed
/// the targets generate passes its target's checks in a plain debug build, so a regression
/// shows in `swift test` without a fuzz build.
@Suite struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz/corpus").standardized

    static func files(_ target: String) throws -> [URL] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }

    static func replay<T: FuzzTarget>(_ target: T.Type) throws {
        let files = try files(T.name)
        #expect(files.count >= T.seeds.count, "Fuzz/corpus/\(T.name) lacks seeds: run make fuzz-seeds")
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            #expect(throws: Never.self, "\(T.name)/\(file.lastPathComponent)") {
                try withBytes(bytes) { (raw) throws(FuzzFailure) in try T.test(raw) }
            }
        }
        for seed in T.seeds {
            #expect(throws: Never.self, "\(T.name) seed \(seed.name)") {
                try withBytes(seed.bytes) { (raw) throws(FuzzFailure) in try T.test(raw) }
            }
            let committed = try? Data(contentsOf: corpus.appendingPathComponent("\(T.name)/seed-\(seed.name)"))
            #expect(
                committed.map { [UInt8]($0) } == seed.bytes, "\(T.name)/seed-\(seed.name) differs: run make fuzz-seeds")
        }
    }

    @Test func frameDecoder() throws { try Self.replay(FrameDecoderFuzz.self) }
    @Test func envelope() throws { try Self.replay(EnvelopeFuzz.self) }
    @Test func protoScanner() throws { try Self.replay(ProtoScannerFuzz.self) }
    @Test func configuration() throws { try Self.replay(ConfigurationFuzz.self) }
    @Test func http2Session() throws { try Self.replay(HTTP2SessionFuzz.self) }
    @Test func bidResponse() throws { try Self.replay(BidResponseFuzz.self) }
    @Test func consent() throws { try Self.replay(ConsentFuzz.self) }
    @Test func placement() throws { try Self.replay(PlacementFuzz.self) }
    @Test func tlsSession() throws { try Self.replay(TLSSessionFuzz.self) }
}
