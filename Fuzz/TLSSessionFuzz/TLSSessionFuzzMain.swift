import AdLoaderFuzz

/// libFuzzer entry for `TLSSessionFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum TLSSessionFuzzMain {
    static func main() {
        FuzzDriver.main(TLSSessionFuzz.self) { data, size in FuzzDriver.test(TLSSessionFuzz.self, data, size) }
    }
}
