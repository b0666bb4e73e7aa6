/// A configuration value out of range; `field` names the setting (e.g.
/// `loaders.default.numberOfAdvertisements`).
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
