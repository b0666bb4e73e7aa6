import AdLoaderConformance
import AdLoaderCore
import AdLoaderWire
import Foundation
import Testing

extension EndToEnd {
    /// Request strings holding a NUL or invalid UTF-8 are refused by the real daemon, naming
    /// the field, instead of being served as another string ("unit\0evil" as "unit", ff fe as
    /// "\u{FFFD}\u{FFFD}"); the call ends alone, the connection and the others go on.
    @Suite("adloaderd refuses bad strings", .serialized, .timeLimit(.minutes(1)))
    struct StringValidationTests {
        /// `bytes` as length-prefixed field `number` (a string field sent as raw bytes).
        static func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] {
            [number << 3 | 2, UInt8(bytes.count)] + bytes
        }

        static let badAdUnits: [[UInt8]] = [Array("unit\0evil".utf8), [0xFF, 0xFE]]

        static func invalid(_ field: String) -> Status {
            Status(code: .invalidArgument, message: "\(field): must be valid UTF-8 without NUL bytes")
        }

        /// Sends a call of `method` whose message is `message` and returns its final status.
        static func status(_ client: RawConnection, _ method: [UInt8], _ message: [UInt8]) throws -> Status {
            let id = client.makeCallID()
            let envelope = [0x08, UInt8(id)] + field(2, method) + field(5, message)
            var bytes: [UInt8] = []
            FrameEncoder.append(envelope, to: &bytes)
            try client.send(bytes)
            return try client.awaitEnd(of: id).status
        }

        @Test func badStringsAreInvalidArgumentAndCreateNoPool() throws {
            let daemon = try DaemonProcess()
            let client = try RawConnection.open(port: daemon.port)
            let other = try RawConnection.open(port: daemon.port)
            try other.borrowAndReturn()
            let borrow = Array(MethodName.borrow.utf8)
            for bad in Self.badAdUnits {
                // Borrow (the server's in-place decoder), every string field.
                #expect(try Self.status(client, borrow, Self.field(1, bad)) == Self.invalid("ad_unit_id"))
                #expect(
                    try Self.status(client, borrow, Self.field(1, Array("healthy".utf8)) + Self.field(2, bad))
                        == Self.invalid("loader"))
                #expect(
                    try Self.status(client, borrow, Self.field(1, Array("healthy".utf8)) + Self.field(3, bad))
                        == Self.invalid("slot_key"))
                // The methods decoded with protobuf-c.
                #expect(
                    try Self.status(client, Array(MethodName.prefetch.utf8), Self.field(1, bad))
                        == Self.invalid("ad_unit_id"))
                #expect(
                    try Self.status(client, Array(MethodName.stats.utf8), Self.field(1, bad)) == Self.invalid("loader"))
                #expect(
                    try Self.status(client, Array(MethodName.watch.utf8), Self.field(2, bad))
                        == Self.invalid("ad_unit_id"))
                // The connection stays usable, and so does the other one.
                try client.borrowAndReturn()
                try other.borrowAndReturn()
            }
            // A method name with a NUL is no method (it used to be served as Borrow).
            let tail = borrow + Array("\0tail".utf8)
            let status = try Self.status(client, tail, Self.field(1, Array("healthy".utf8)))
            #expect(
                status
                    == Status(
                        code: .unimplemented, message: #"unknown method "/adloader.v1.NativeAdLoader/Borrow\0tail""#))
            let garbled = try Self.status(client, Array("/adloader.v1.NativeAdLoader/".utf8) + [0xFF, 0xFE], [])
            #expect(
                garbled
                    == Status(code: .unimplemented, message: #"unknown method "/adloader.v1.NativeAdLoader/\xFF\xFE""#))
            try client.borrowAndReturn()
            // No pool was made from a cut or repaired name.
            let units = try client.stats().map(\.adUnitID)
            #expect(units.contains("healthy"))
            for name in ["unit", "unit\0evil", "\u{FFFD}\u{FFFD}", ""] { #expect(!units.contains(name), "\(units)") }
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }
    }
}
