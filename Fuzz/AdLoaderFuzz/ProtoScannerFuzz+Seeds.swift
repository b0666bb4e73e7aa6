import AdLoaderWire

extension ProtoScannerFuzz {
    public static var seeds: [(name: String, bytes: [UInt8])] {
        [
            (
                "borrow",
                BorrowRequestMessage(
                    adUnitID: "feed-native", loader: "default", slot: "feed-42/position-7", waitMilliseconds: 500
                ).encoded()
            ),
            ("borrow-utf8", BorrowRequestMessage(adUnitID: "广告 👩‍👩‍👧‍👦", slot: "e\u{301}").encoded()),
            ("return", ReturnRequestMessage(leaseID: .max, shown: true).encoded()),
            (
                "return-invalidate",
                ReturnRequestMessage(leaseID: 17, shown: false, invalidate: true, invalidateReason: "bad creative")
                    .encoded()
            ),
            // Field 1 twice (the last wins), an unknown varint and length-prefixed field.
            (
                "repeated-unknown",
                [0x0A, 0x01, 0x61, 0x0A, 0x01, 0x62, 0xC0, 0x3E, 0x96, 0x01, 0xCA, 0x3E, 0x03, 0x61, 0x62, 0x63]
            ),
            // wait_ms as an overlong 10-byte varint; a bool (shown) as a length-prefixed field.
            ("overlong", [0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x12, 0x02, 0x80, 0x00]),
            ("fixed-types", [0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 1, 2, 3, 4]),
            ("string-nul", [0x0A, 0x03, 0x61, 0x00, 0x62]),
            ("string-bad-utf8", [0x12, 0x02, 0xFF, 0xFE, 0x1A, 0x03, 0xED, 0xA0, 0x80]),
            ("truncated", [0x0A, 0x05, 0x61]),
            ("bad-key", [0x00, 0x01]),
            ("group", [0x0B, 0x0C]),
            ("empty", []),
        ]
    }
}
