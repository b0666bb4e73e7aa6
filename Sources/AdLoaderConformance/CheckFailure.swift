/// Why a check failed: what was expected and what happened instead.
///
/// Also what every operation of ``RawConnection`` throws, so the end-to-end tests that use
/// that client report failures the same way.
package struct CheckFailure: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// Bytes as spaced hex, e.g. "41 44 4c", shortened after 32 bytes.
package func hex(_ bytes: [UInt8]) -> String {
    let shown = bytes.prefix(32).map { byte -> String in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
    return shown.joined(separator: " ") + (bytes.count > 32 ? " ... (\(bytes.count) bytes)" : "")
}
