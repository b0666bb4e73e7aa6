/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as nginx's `ngx_crc32_*` and zlib's
/// `crc32`: the running value starts at all ones and is inverted at the end.
struct CRC32: Hashable, Sendable {
    private var value: UInt32 = 0xFFFF_FFFF

    /// The table of the byte-at-a-time algorithm.
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    mutating func update(_ bytes: some Sequence<UInt8>) {
        var crc = value
        for byte in bytes { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        value = crc
    }

    var final: UInt32 { value ^ 0xFFFF_FFFF }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.final
    }
}
