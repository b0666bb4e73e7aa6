import AdLoaderFuzz

/// libFuzzer entry for `FrameDecoderFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum FrameDecoderFuzzMain {
    static func main() {
        FuzzDriver.main(FrameDecoderFuzz.self) { data, size in FuzzDriver.test(FrameDecoderFuzz.self, data, size) }
    }
}
