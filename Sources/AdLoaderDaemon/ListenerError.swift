public import AdLoaderFramed
public import AdLoaderUV

/// A listener that could not be bound: which setting, which address, and why.
public struct ListenerError: Error, CustomStringConvertible {
    /// The configuration key to fix: `listeners.port` or `listeners.unixSocket`.
    public var setting: String
    public var address: ListenAddress
    public var error: UVError

    public var description: String { "\(setting): cannot listen on \(address): \(error)" }
}
