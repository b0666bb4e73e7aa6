import AdLoaderWire

/// gRPC-over-HTTP/2 details that are pure text and bytes: `grpc-timeout`, `grpc-message`
/// percent-encoding, the length-prefixed message header.
public enum GRPCWire {
    /// The response header (initial metadata, or the trailers of a trailers-only response) that
    /// names the daemon instance that answered (``AdLoaderService/responseMetadata``).
    public static let instanceHeader = CallMetadata.instanceKey

    /// Parses a `grpc-timeout` value: 1 to 8 ASCII digits and a unit (H, M, S, m, u, n).
    /// - Returns: the duration, or nil when the value is malformed.
    public static func parseTimeout(_ value: String) -> Duration? {
        let bytes = Array(value.utf8)
        guard (2...9).contains(bytes.count), let unit = bytes.last else { return nil }
        var amount: Int64 = 0
        for digit in bytes.dropLast() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            amount = amount * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        switch unit {
        case UInt8(ascii: "H"): return .seconds(amount * 3600)
        case UInt8(ascii: "M"): return .seconds(amount * 60)
        case UInt8(ascii: "S"): return .seconds(amount)
        case UInt8(ascii: "m"): return .milliseconds(amount)
        case UInt8(ascii: "u"): return .microseconds(amount)
        case UInt8(ascii: "n"): return .nanoseconds(amount)
        default: return nil
        }
    }

    /// Percent-encodes a status message for `grpc-message`: bytes outside 0x20...0x7E and `%`
    /// become `%XX` (the UTF-8 bytes of non-ASCII text).
    public static func percentEncode(_ message: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(message.utf8.count)
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7e, byte != UInt8(ascii: "%") {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xf)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `contentType` is gRPC's: `application/grpc`, optionally `+proto` or with
    /// parameters (`application/grpc;...`).
    public static func isGRPCContentType(_ contentType: String) -> Bool {
        let lowered = contentType.lowercased()
        guard lowered.hasPrefix("application/grpc") else { return false }
        let rest = lowered.dropFirst("application/grpc".count)
        return rest.isEmpty || rest.hasPrefix("+proto") || rest.hasPrefix(";")
    }
}
