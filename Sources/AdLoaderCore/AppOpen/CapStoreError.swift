/// A cap store could not read or write counts (file error, Redis down, timeout).
public struct CapStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, e.g. "redis 127.0.0.1:6379: Connection refused".
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
