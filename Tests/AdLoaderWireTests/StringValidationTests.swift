import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// String fields holding a NUL or invalid UTF-8 are refused, naming the field, on every
/// message and both decode paths (StringValidation.swift); nothing is cut or repaired.
@Suite struct StringValidationTests {
    static func invalid(_ field: String) -> FrameError {
        FrameError(code: .badMessage, message: "\(field): must be valid UTF-8 without NUL bytes")
    }

    /// A 4-byte marker put in a string field, then overwritten with bad bytes of the same
    /// length (so every length prefix stays right).
    static let marker = "QQQQ"
    static let badReplacements: [[UInt8]] = [
        Array("u\0ev".utf8), [0xFF, 0xFE, 0x61, 0x62], [0x61, 0x62, 0x63, 0x00], [0xC0, 0x80, 0x61, 0x62],
        [0xED, 0xA0, 0x80, 0x61], [0xF4, 0x90, 0x80, 0x80], [0x61, 0x62, 0xE2, 0x82],
    ]

    /// `bytes` with the one occurrence of ``marker`` replaced by `replacement`.
    static func replacingMarker(in bytes: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        let needle = Array(marker.utf8)
        let starts = bytes.indices.filter { bytes[$0...].starts(with: needle) }
        precondition(starts.count == 1, "the marker must occur once")
        var out = bytes
        out.replaceSubrange(starts[0]..<(starts[0] + 4), with: replacement)
        return out
    }

    /// Decoding `message` with its marker replaced by each bad replacement throws `field`'s error.
    static func expectRefused<M: WireMessage>(
        _ message: M, field: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let bytes = message.encoded()
        #expect((try? M(decoding: bytes)) == message, sourceLocation: sourceLocation)
        for bad in badReplacements {
            #expect(throws: invalid(field), "\(bad)", sourceLocation: sourceLocation) {
                try M(decoding: replacingMarker(in: bytes, with: bad))
            }
        }
    }

    @Test func requestStringFields() {
        let m = Self.marker
        Self.expectRefused(PrefetchRequestMessage(adUnitID: m, loader: "l"), field: "ad_unit_id")
        Self.expectRefused(PrefetchRequestMessage(adUnitID: "u", loader: m), field: "loader")
        Self.expectRefused(BorrowRequestMessage(adUnitID: m, loader: "l", slot: "s"), field: "ad_unit_id")
        Self.expectRefused(BorrowRequestMessage(adUnitID: "u", loader: m, slot: "s"), field: "loader")
        Self.expectRefused(BorrowRequestMessage(adUnitID: "u", loader: "l", slot: m), field: "slot_key")
        Self.expectRefused(StatsRequestMessage(loader: m, adUnitID: "u"), field: "loader")
        Self.expectRefused(StatsRequestMessage(loader: "l", adUnitID: m), field: "ad_unit_id")
        Self.expectRefused(WatchRequestMessage(loader: m, adUnitID: "u", kinds: [.leased]), field: "loader")
        Self.expectRefused(WatchRequestMessage(loader: "l", adUnitID: m, kinds: [.leased]), field: "ad_unit_id")
    }

    /// The protobuf-c path of BorrowRequest (the reference of the in-place one) refuses the same.
    @Test func borrowRequestProtobufCPath() throws {
        for (message, field) in [
            (BorrowRequestMessage(adUnitID: Self.marker), "ad_unit_id"),
            (BorrowRequestMessage(adUnitID: "u", loader: Self.marker), "loader"),
            (BorrowRequestMessage(adUnitID: "u", slot: Self.marker), "slot_key"),
        ] {
            for bad in Self.badReplacements {
                let bytes = Self.replacingMarker(in: message.encoded(), with: bad)
                #expect(throws: Self.invalid(field)) {
                    try bytes.withUnsafeBytes { try BorrowRequestMessage(protobufC: $0) }
                }
                #expect(throws: Self.invalid(field)) { try BorrowRequestMessage(decoding: bytes) }
            }
        }
        // The first bad field in wire order is named, on both paths.
        let both = BorrowRequestMessage(adUnitID: "\u{3}", loader: "\u{4}").encoded().map {
            $0 == 3 ? 0 : $0 == 4 ? 0xFF : $0
        }
        #expect(both == [0x0A, 0x01, 0x00, 0x12, 0x01, 0xFF])
        #expect(throws: Self.invalid("ad_unit_id")) { try BorrowRequestMessage(decoding: both) }
        #expect(throws: Self.invalid("ad_unit_id")) {
            try both.withUnsafeBytes { try BorrowRequestMessage(protobufC: $0) }
        }
    }

    /// A message that does not decode says so, even when a string before the damage is bad.
    @Test func undecodableWinsOverBadString() {
        let bytes: [UInt8] = [0x0A, 0x02, 0xFF, 0xFE, 0x12, 0x09, 0x61]
        let expected = FrameError(code: .badMessage, message: "BorrowRequest of 7 bytes does not decode as protobuf")
        #expect(throws: expected) { try BorrowRequestMessage(decoding: bytes) }
        #expect(throws: expected) { try bytes.withUnsafeBytes { try BorrowRequestMessage(protobufC: $0) } }
    }

    @Test func envelopeStringFields() throws {
        let m = Self.marker
        let borrow = BorrowRequestMessage(adUnitID: "u").encoded()
        let withMethod = RequestFrame(callID: 1, method: m, message: borrow)
        let withKey = RequestFrame(callID: 1, method: MethodName.borrow, metadata: [MetadataEntry(key: m, value: "v")])
        let withValue = RequestFrame(
            callID: 1, method: MethodName.borrow, metadata: [MetadataEntry(key: "k", value: m)])
        for bad in Self.badReplacements {
            let method = Self.replacingMarker(in: withMethod.encoded(), with: bad)
            #expect(throws: Self.invalid("method")) { try RequestFrame(decoding: method) }
            // The server's in-place header: a name that is no method, shown with escapes.
            let header = try method.withUnsafeBytes { try RequestFrame.decodeHeader($0) }
            #expect(!MethodName.all.contains(header.method) && header.method.contains("\\"))
            #expect(header.callID == 1 && header.messageRange.count == borrow.count)
            #expect(throws: Self.invalid("metadata.key")) {
                try RequestFrame(decoding: Self.replacingMarker(in: withKey.encoded(), with: bad))
            }
            #expect(throws: Self.invalid("metadata.value")) {
                try RequestFrame(decoding: Self.replacingMarker(in: withValue.encoded(), with: bad))
            }
        }
        // A known name with a NUL and a tail is not that method (it used to be served as Borrow).
        let tail = [0x08, 0x02] + ProtoScannerTests.stringField(2, Array((MethodName.borrow + "\0tail").utf8))
        let header = try tail.withUnsafeBytes { try RequestFrame.decodeHeader($0) }
        #expect(header.method == MethodName.borrow + "\\0tail")
    }

    /// What a sender checks before encoding (the C-string encoder would cut at the NUL).
    @Test func stringFieldWithNULNamesTheFirstOne() {
        #expect(BorrowRequestMessage(adUnitID: "unit\0evil").stringFieldWithNUL == "ad_unit_id")
        #expect(BorrowRequestMessage(adUnitID: "u", loader: "\0", slot: "\0").stringFieldWithNUL == "loader")
        #expect(BorrowRequestMessage(adUnitID: "u", slot: "s\0").stringFieldWithNUL == "slot_key")
        #expect(PrefetchRequestMessage(adUnitID: "u", loader: "l\0").stringFieldWithNUL == "loader")
        #expect(StatsRequestMessage(loader: "\0", adUnitID: "\0").stringFieldWithNUL == "loader")
        #expect(WatchRequestMessage(adUnitID: "\0").stringFieldWithNUL == "ad_unit_id")
        #expect(RequestFrame(callID: 1, method: "/a\0").stringFieldWithNUL == "method")
        #expect(
            RequestFrame(callID: 1, metadata: [MetadataEntry(key: "k", value: "v\0")]).stringFieldWithNUL
                == "metadata.value")
        for text in Fixtures.strings {
            #expect(BorrowRequestMessage(adUnitID: text, loader: text, slot: text).stringFieldWithNUL == nil)
            #expect(
                RequestFrame(callID: 1, method: text, metadata: [MetadataEntry(key: text, value: text)])
                    .stringFieldWithNUL == nil)
        }
        #expect(ReturnRequestMessage(leaseID: 1, shown: true).stringFieldWithNUL == nil)
    }

    @Test func printableMethodNames() {
        func printable(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { MethodName.printable($0) } }
        #expect(printable(Array("/a\0b".utf8)) == "/a\\0b")
        #expect(printable([0xFF, 0xFE]) == "\\xFF\\xFE")
        #expect(printable(Array("é".utf8) + [0xC3] + Array("🎉".utf8) + [0x0A]) == "é\\xC3🎉\n")
        #expect(printable([0xE2, 0x82]) == "\\xE2\\x82")
    }

    @Test func responseStringFields() {
        let m = Self.marker
        var ad = Fixtures.ad()
        ad.native.headline = m
        Self.expectRefused(
            BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad)), field: "lease.ad.headline")
        ad = Fixtures.ad()
        ad.native.icon = AdImage(url: m, width: 1, height: 1)
        Self.expectRefused(
            BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad)), field: "lease.ad.icon.url")
        ad = Fixtures.ad()
        ad.native.clickTrackers = ["a", m]
        Self.expectRefused(
            BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad)), field: "lease.ad.click_trackers")
        Self.expectRefused(
            BorrowResponseMessage(outcome: .reused, lease: Fixtures.lease(slot: m)), field: "lease.slot_key")
        Self.expectRefused(
            StatsResponseMessage(pools: [PoolStats(loader: "a", adUnitID: "b"), PoolStats(loader: m, adUnitID: "c")]),
            field: "pools.loader")
        let event = AdEvent(kind: .leased, at: AdInstant(unixMilliseconds: 5), loader: m, adUnitID: "u")
        Self.expectRefused(EventMessage(event: event), field: "loader")
        Self.expectRefused(
            ResponseFrame(callID: 1, end: true, status: Status(code: .notFound, message: m)), field: "status_message")
    }

    /// The scanner agrees with the standard library on every 1- and 2-byte input, every
    /// 3-byte input starting with a multi-byte lead, and random longer ones.
    @Test func utf8ValidatorAgreesWithStandardLibrary() {
        func agree(_ bytes: [UInt8]) -> Bool {
            let expected = String(validating: bytes, as: UTF8.self)
            let hasNUL = bytes.contains(0)
            return bytes.withUnsafeBytes { raw in
                isValidUTF8(raw) == (expected != nil) && validString(raw) == (hasNUL ? nil : expected)
                    && isValidStringField(raw) == (expected != nil && !hasNUL)
            }
        }
        var failures: [[UInt8]] = []
        for a in 0...255 as ClosedRange<UInt8> {
            if !agree([a]) { failures.append([a]) }
            for b in 0...255 as ClosedRange<UInt8> where !agree([a, b]) { failures.append([a, b]) }
        }
        for a in 0xC0...0xFF as ClosedRange<UInt8> {
            for b in 0x70...0xC0 as ClosedRange<UInt8> {
                for c in [0x00, 0x41, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF] as [UInt8] where !agree([a, b, c]) {
                    failures.append([a, b, c])
                }
            }
        }
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<50_000 {
            let count = Int.random(in: 4...24, using: &generator)
            var bytes = [UInt8].random(count: count, using: &generator)
            if Bool.random(using: &generator) {
                bytes = bytes.map { $0 & 0x7F } + [0xF0, 0x9F, 0x8E, 0x89] + bytes.prefix(3)
            }
            if !agree(bytes) { failures.append(bytes) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        for text in Fixtures.strings + [Fixtures.huge] {
            #expect(Array(text.utf8).withUnsafeBytes { isValidStringField($0) })
        }
        #expect(!Array("a\0b".utf8).withUnsafeBytes { isValidStringField($0) })
    }
}
