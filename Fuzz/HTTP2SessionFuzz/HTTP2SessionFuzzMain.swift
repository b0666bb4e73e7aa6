import AdLoaderFuzz

/// libFuzzer entry for `HTTP2SessionFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum HTTP2SessionFuzzMain {
    static func main() {
        FuzzDriver.main(HTTP2SessionFuzz.self) { data, size in FuzzDriver.test(HTTP2SessionFuzz.self, data, size) }
    }
}
