import AdLoaderFuzz

/// libFuzzer entry for `ConsentFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum ConsentFuzzMain {
    static func main() {
        FuzzDriver.main(ConsentFuzz.self) { data, size in FuzzDriver.test(ConsentFuzz.self, data, size) }
    }
}
