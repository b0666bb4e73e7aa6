/// `grpc.health.v1.Health`: SERVING for the whole server ("") and for
/// `adloader.v1.NativeAdLoader` while the server runs, NOT_SERVING once it drains.
public struct HealthService: Sendable {
    /// `HealthCheckResponse.ServingStatus`.
    public enum ServingStatus: UInt64, Sendable {
        case unknown = 0
        case serving = 1
        case notServing = 2
        case serviceUnknown = 3
    }

    /// The services whose health is reported ("" is the server as a whole).
    public let services: Set<String> = ["", "adloader.v1.NativeAdLoader"]

    public init() {}

    /// The status of `service`; ``ServingStatus/serviceUnknown`` for a service not served.
    public func status(of service: String, draining: Bool) -> ServingStatus {
        guard services.contains(service) else { return .serviceUnknown }
        return draining ? .notServing : .serving
    }

    /// The `service` field of a HealthCheckRequest, or nil when it does not decode.
    static func serviceName(decoding message: [UInt8]) -> String? {
        var reader = ProtoReader(message)
        var name = ""
        do throws(ProtoReader.Malformed) {
            while let field = try reader.next() {
                if field.number == 1 { name = field.string }
            }
        } catch {
            return nil
        }
        return name
    }

    /// An encoded HealthCheckResponse.
    static func response(_ status: ServingStatus) -> [UInt8] {
        var encoder = ProtoEncoder()
        encoder.varintField(1, status.rawValue)
        return encoder.bytes
    }
}
