import Testing

@testable import AdLoaderFuzz

/// The frame-decoder harness's chunk plan: its feed loop ends only because every cycle of the
/// sizes appends something, and a run of 0 sizes is one empty append.
@Suite struct FrameDecoderFuzzChunkTests {
    @Test func runsOfZeroBecomeOneAndSizesScale() {
        #expect(FrameDecoderFuzz.chunkSizes([], streamCount: 100) == [])
        #expect(FrameDecoderFuzz.chunkSizes([0, 0, 0], streamCount: 100) == [0, 1])
        #expect(FrameDecoderFuzz.chunkSizes([0, 0, 0], streamCount: 64 * 1024) == [0, 4])
        #expect(FrameDecoderFuzz.chunkSizes([0, 0, 3, 0, 0, 5], streamCount: 100) == [0, 3, 0, 5])
        // Cyclically: the trailing 0 follows the leading 0 round the cycle.
        #expect(FrameDecoderFuzz.chunkSizes([0, 2, 0], streamCount: 100) == [2, 0])
        #expect(FrameDecoderFuzz.chunkSizes([1, 2], streamCount: 48 * 1024) == [3, 6])
    }

    @Test func everyCycleAppendsAndNoTwoEmptyAppendsFollow() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let sizes = (0..<Int.random(in: 0...15, using: &generator)).map { _ in
                Bool.random(using: &generator) ? 0 : Int.random(in: 0...255, using: &generator)
            }
            let streamCount = Int.random(in: 0...(300 * 1024), using: &generator)
            let plan = FrameDecoderFuzz.chunkSizes(sizes, streamCount: streamCount)
            guard !sizes.isEmpty else {
                #expect(plan.isEmpty)
                continue
            }
            #expect(plan.contains { $0 > 0 }, "\(sizes) -> \(plan)")
            for i in plan.indices where plan[i] == 0 {
                #expect(plan[(i + 1) % plan.count] != 0, "\(sizes) -> \(plan)")
            }
        }
    }
}
