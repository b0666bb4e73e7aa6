import AdLoaderFuzz

/// libFuzzer entry for `ProtoScannerFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum ProtoScannerFuzzMain {
    static func main() {
        FuzzDriver.main(ProtoScannerFuzz.self) { data, size in FuzzDriver.test(ProtoScannerFuzz.self, data, size) }
    }
}
