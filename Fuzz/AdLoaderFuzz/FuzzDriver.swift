#if FUZZING
    import CLibFuzzer
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The `main` of every fuzz executable.
///
/// Built with `-sanitize=fuzzer -D FUZZING` (`Fuzz/run.sh`), it runs libFuzzer with the
/// process's arguments (`LLVMFuzzerRunDriver`). Built plainly (`swift build`), it replays
/// the files and folders it is given through the target, or with `--write-seeds DIR` writes
/// the target's seeds there, so the targets build and run with every `swift build`.
public enum FuzzDriver {
    /// The type of libFuzzer's callback (`LLVMFuzzerTestOneInput`).
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    /// Runs libFuzzer (fuzz builds) or the replay (plain builds) and exits.
    /// - Parameter callback: a closure calling ``test(_:_:_:)`` for the target.
    public static func main<T: FuzzTarget>(_ target: T.Type, _ callback: Callback) -> Never {
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
        #else
            exit(replay(target, arguments: Array(CommandLine.arguments.dropFirst())))
        #endif
    }

    /// libFuzzer's callback body: runs ``FuzzTarget/test(_:)`` and crashes on a failure,
    /// which libFuzzer reports and saves as a reproducer.
    public static func test<T: FuzzTarget>(_ target: T.Type, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        do throws(FuzzFailure) {
            try T.test(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
        } catch {
            fatalError("\(T.name): \(error)")
        }
        return 0
    }

    /// Replays `arguments` (files, or folders of files) through the target; `--write-seeds
    /// DIR` writes the seeds instead. Returns the exit status.
    static func replay<T: FuzzTarget>(_ target: T.Type, arguments: [String]) -> Int32 {
        if arguments.first == "--write-seeds" {
            guard arguments.count == 2 else { return usage(T.name) }
            return writeSeeds(T.self, to: arguments[1])
        }
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else { return usage(T.name) }
        var count = 0
        for path in arguments.flatMap(FuzzFiles.list) {
            guard let bytes = FuzzFiles.read(path) else {
                FuzzFiles.printError("\(T.name): cannot read \(path)")
                return 1
            }
            do throws(FuzzFailure) {
                try withBytes(bytes) { (raw) throws(FuzzFailure) in try T.test(raw) }
            } catch {
                FuzzFiles.printError("\(T.name): \(path): \(error)")
                return 1
            }
            count += 1
        }
        print("\(T.name): \(count) inputs replayed, no failure")
        return 0
    }

    private static func writeSeeds<T: FuzzTarget>(_ target: T.Type, to directory: String) -> Int32 {
        for seed in T.seeds {
            guard FuzzFiles.write(seed.bytes, to: directory + "/seed-" + seed.name) else {
                FuzzFiles.printError("\(T.name): cannot write \(directory)/seed-\(seed.name)")
                return 1
            }
        }
        print("\(T.name): \(T.seeds.count) seeds written to \(directory)")
        return 0
    }

    private static func usage(_ name: String) -> Int32 {
        FuzzFiles.printError(
            """
            usage: <target> FILE-OR-DIR...        replay inputs (plain build)
                   <target> --write-seeds DIR     write the seed corpus
                   <target> [libFuzzer flags] CORPUS...   fuzz (build with Fuzz/run.sh)
            target: \(name)
            """)
        return 2
    }
}
