/// A broken invariant found by a fuzz target: the fuzzer turns it into a crash (and a
/// reproducer file), the corpus replay test into a failed expectation.
public struct FuzzFailure: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// Throws a ``FuzzFailure`` with `message` unless `condition` holds.
@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Bytes as hex, shortened, for failure messages.
func hex(_ bytes: some Collection<UInt8>, limit: Int = 96) -> String {
    let shown = bytes.prefix(limit).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    return bytes.count > limit ? shown + " … (\(bytes.count) bytes)" : shown
}

/// Calls `body` with the bytes of `array`, keeping its typed error (Array's
/// `withUnsafeBytes` rethrows it as `any Error`).
func withBytes<R, E: Error>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    let result = array.withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }
    return try result.get()
}
