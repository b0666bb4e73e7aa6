import AdLoaderFuzz

/// libFuzzer entry for `BidResponseFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum BidResponseFuzzMain {
    static func main() {
        FuzzDriver.main(BidResponseFuzz.self) { data, size in FuzzDriver.test(BidResponseFuzz.self, data, size) }
    }
}
