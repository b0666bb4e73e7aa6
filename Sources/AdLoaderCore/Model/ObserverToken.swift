/// Identifies an observer registered with ``NativeAdvertisementLoader/addObserver(_:)``.
public struct ObserverToken: Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}
