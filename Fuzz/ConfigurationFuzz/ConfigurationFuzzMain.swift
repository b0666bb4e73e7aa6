import AdLoaderFuzz

/// libFuzzer entry for `ConfigurationFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum ConfigurationFuzzMain {
    static func main() {
        FuzzDriver.main(ConfigurationFuzz.self) { data, size in FuzzDriver.test(ConfigurationFuzz.self, data, size) }
    }
}
