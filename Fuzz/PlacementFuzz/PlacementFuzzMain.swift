import AdLoaderFuzz

/// libFuzzer entry for `PlacementFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum PlacementFuzzMain {
    static func main() {
        FuzzDriver.main(PlacementFuzz.self) { data, size in FuzzDriver.test(PlacementFuzz.self, data, size) }
    }
}
