/// One libFuzzer target: a check of invariants over arbitrary input bytes, and the seeds
/// its corpus starts from.
///
/// Each target has a thin executable (`Fuzz/<Name>Fuzz/`) whose `main` hands ``test(_:)``
/// to ``FuzzDriver``; `Fuzz/run.sh` (`make fuzz`, `make fuzz-smoke`) builds and runs it.
public protocol FuzzTarget {
    /// The corpus folder under `Fuzz/corpus/`, e.g. `frame-decoder`.
    static var name: String { get }

    /// Seed inputs (valid messages made by the encoders, and edge cases), written by
    /// `<Name>Fuzz --write-seeds DIR` and committed under `Fuzz/corpus/<name>/`.
    static var seeds: [(name: String, bytes: [UInt8])] { get }

    /// Runs the code under test on `input` and checks its invariants.
    /// - Throws: ``FuzzFailure`` describing the first broken invariant. A crash of the code
    ///   under test (a trap, an ASan report) is a finding as well.
    static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure)
}
