import AdLoaderWire
import Testing

@Suite struct FrameEncoderTests {
    @Test(arguments: [0, 1, 255, 256, 65_536, 1 << 20])
    func prefixIsFlagsZeroAndBigEndianLength(length: Int) {
        var out: [UInt8] = [0xEE]
        FrameEncoder.append([UInt8](repeating: 1, count: length), to: &out)
        #expect(out[0] == 0xEE)
        #expect(out[1] == 0)
        let decoded = Int(out[2]) << 24 | Int(out[3]) << 16 | Int(out[4]) << 8 | Int(out[5])
        #expect(decoded == length)
        #expect(out.count == 1 + 5 + length)
    }

    @Test func knownBytes() {
        var out: [UInt8] = []
        FrameEncoder.append([0x08, 0x01], to: &out)
        #expect(out == [0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x01])
    }
}
