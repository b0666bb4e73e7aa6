import AdLoaderCore
import AdLoaderWire

/// Values shared by the wire tests.
enum Fixtures {
    /// Strings that stress the UTF-8 path: empty, ASCII, emoji (incl. ZWJ sequences and
    /// flags), CJK, right-to-left scripts, combining marks.
    static let strings: [String] = [
        "", "a", "feed-42/position-7", "👩‍👩‍👧‍👦 🇯🇵 ✨", "广告加载器 ネイティブ広告 광고", "مرحبا بالعالم", "שלום עולם",
        "e\u{301}\u{328}", String(repeating: "x", count: 300),
    ]

    /// A string of about 1 MiB (multi-byte characters included).
    static let huge: String = String(repeating: "0123456789abcdef", count: 65_536 - 1) + "é🎉"

    static func ad(id: String = "ad-1", text: String = "Headline", full: Bool = true) -> Ad {
        let content = NativeAdContent(
            headline: text, body: full ? "Body \(text)" : "", callToAction: full ? "Install" : "",
            advertiser: full ? "ACME" : "",
            icon: full ? AdImage(url: "https://cdn.example/icon.png", width: 128, height: 128) : nil,
            image: full ? AdImage(url: "https://cdn.example/\(text).jpg", width: 1200, height: 627) : nil,
            starRating: full ? 4.5 : nil, price: full ? "$4.99" : nil, store: full ? "Google Play" : nil,
            clickURL: full ? "https://click.example/?q=\(text)" : "",
            impressionTrackers: full ? ["https://t.example/imp/1", text] : [],
            clickTrackers: full ? ["https://t.example/clk/1"] : [],
            adChoicesURL: full ? "https://adchoices.example" : nil)
        return Ad(
            id: id, adUnitID: "feed-native", loader: "default", creative: .native(content),
            loadedAt: AdInstant(unixMilliseconds: 1_764_430_000_000),
            expiresAt: AdInstant(unixMilliseconds: 1_764_433_600_000), showCount: full ? 2 : 0)
    }

    static func lease(id: UInt64 = 7, slot: String? = "feed-42/position-7", ad: Ad = ad()) -> Lease {
        Lease(id: id, slot: slot, expiresAt: AdInstant(unixMilliseconds: 1_764_430_300_000), ad: ad)
    }

    /// Bytes of an extra field number 1000 (varint) and 1001 (length-delimited): numbers no
    /// message of adloader.v1 uses, so decoders must skip them.
    static let unknownFields: [UInt8] = [0xC0, 0x3E, 0x96, 0x01, 0xCA, 0x3E, 0x03, 0x61, 0x62, 0x63]
}

/// A deterministic PRNG so garbage tests are reproducible.
typealias SeededGenerator = SplitMix64

extension Array where Element == UInt8 {
    static func random(count: Int, using generator: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}

/// Checks that `value` survives encode → decode, also with unknown fields appended.
func roundTrips<M: WireMessage>(_ value: M) throws -> Bool {
    let bytes = value.encoded()
    let plain = try M(decoding: bytes)
    let extended = try M(decoding: bytes + Fixtures.unknownFields)
    let prefixed = try M(decoding: Fixtures.unknownFields + bytes)
    return plain == value && extended == value && prefixed == value
}

extension Ad {
    /// The native assets, to read and edit in tests (the ad must be native).
    var native: NativeAdContent {
        get { creative.nativeContent! }
        set { creative = .native(newValue) }
    }
}
