import AdLoaderFuzz

/// libFuzzer entry for `EnvelopeFuzz` (fuzz builds), or its corpus replay (plain builds).
@main enum EnvelopeFuzzMain {
    static func main() {
        FuzzDriver.main(EnvelopeFuzz.self) { data, size in FuzzDriver.test(EnvelopeFuzz.self, data, size) }
    }
}
