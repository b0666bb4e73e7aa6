import AdLoaderModel

// BorrowResponse, Lease, Ad (as the proto's NativeAd) and Image encoded by hand (see
// ProtoWriter.swift): the Borrow answer is the biggest message on the hot path. Field numbers
// and keys follow Proto/adloader/v1/adloader.proto; `encodedWithProtobufC()` keeps the
// protobuf-c packing for the tests that prove both identical.

extension AdImage {
    var protoSize: Int {
        ProtoSize.string(key: 0x0A, url)
            + ProtoSize.varintField(key: 0x10, UInt64(UInt32(wire: width)))
            + ProtoSize.varintField(key: 0x18, UInt64(UInt32(wire: height)))
    }

    func write(to w: inout ProtoWriter) {
        w.string(key: 0x0A, url)
        w.varintField(key: 0x10, UInt64(UInt32(wire: width)))
        w.varintField(key: 0x18, UInt64(UInt32(wire: height)))
    }
}

extension Ad {
    // Keys: (field << 3) | wire type.
    private static let keyID: UInt64 = 1 << 3 | 2
    private static let keyAdUnitID: UInt64 = 2 << 3 | 2
    private static let keyLoader: UInt64 = 3 << 3 | 2
    private static let keyFormat: UInt64 = 4 << 3
    private static let keyHeadline: UInt64 = 10 << 3 | 2
    private static let keyBody: UInt64 = 11 << 3 | 2
    private static let keyCallToAction: UInt64 = 12 << 3 | 2
    private static let keyAdvertiser: UInt64 = 13 << 3 | 2
    private static let keyIcon: UInt64 = 14 << 3 | 2
    private static let keyImage: UInt64 = 15 << 3 | 2
    private static let keyStarRating: UInt64 = 16 << 3 | 1
    private static let keyPrice: UInt64 = 17 << 3 | 2
    private static let keyStore: UInt64 = 18 << 3 | 2
    private static let keyClickURL: UInt64 = 30 << 3 | 2
    private static let keyImpressionTrackers: UInt64 = 31 << 3 | 2
    private static let keyClickTrackers: UInt64 = 32 << 3 | 2
    private static let keyAdChoicesURL: UInt64 = 33 << 3 | 2
    private static let keyLoadedAt: UInt64 = 50 << 3
    private static let keyExpiresAt: UInt64 = 51 << 3
    private static let keyShowCount: UInt64 = 52 << 3
    private static let keyFullScreen: UInt64 = 60 << 3 | 2

    /// A full-screen creative is encoded with empty native fields and its `full_screen`
    /// (see Ad+ProtobufC.swift).
    var protoSize: Int {
        let content = wireContent
        var size =
            ProtoSize.string(key: Self.keyID, id) + ProtoSize.string(key: Self.keyAdUnitID, adUnitID)
            + ProtoSize.string(key: Self.keyLoader, loader)
            + ProtoSize.varintField(key: Self.keyFormat, format.wireValue)
            + ProtoSize.string(key: Self.keyHeadline, content.headline)
            + ProtoSize.string(key: Self.keyBody, content.body)
            + ProtoSize.string(key: Self.keyCallToAction, content.callToAction)
            + ProtoSize.string(key: Self.keyAdvertiser, content.advertiser)
        if let icon = content.icon { size += ProtoSize.delimited(key: Self.keyIcon, icon.protoSize) }
        if let image = content.image { size += ProtoSize.delimited(key: Self.keyImage, image.protoSize) }
        if let rating = content.starRating, rating != 0 { size += 2 + 8 }
        size +=
            ProtoSize.string(key: Self.keyPrice, content.price ?? "")
            + ProtoSize.string(key: Self.keyStore, content.store ?? "")
            + ProtoSize.string(key: Self.keyClickURL, content.clickURL)
        for tracker in content.impressionTrackers {
            size += ProtoSize.delimited(key: Self.keyImpressionTrackers, ProtoSize.cStringLength(tracker))
        }
        for tracker in content.clickTrackers {
            size += ProtoSize.delimited(key: Self.keyClickTrackers, ProtoSize.cStringLength(tracker))
        }
        size +=
            ProtoSize.string(key: Self.keyAdChoicesURL, content.adChoicesURL ?? "")
            + ProtoSize.varintField(key: Self.keyLoadedAt, UInt64(bitPattern: loadedAt.unixMilliseconds))
            + ProtoSize.varintField(key: Self.keyExpiresAt, UInt64(bitPattern: expiresAt.unixMilliseconds))
            + ProtoSize.varintField(key: Self.keyShowCount, UInt64(UInt32(wire: showCount)))
        if let fullScreen = creative.fullScreenCreative {
            size += ProtoSize.delimited(key: Self.keyFullScreen, fullScreen.protoSize)
        }
        return size
    }

    func write(to w: inout ProtoWriter) {
        let content = wireContent
        w.string(key: Self.keyID, id)
        w.string(key: Self.keyAdUnitID, adUnitID)
        w.string(key: Self.keyLoader, loader)
        w.varintField(key: Self.keyFormat, format.wireValue)
        w.string(key: Self.keyHeadline, content.headline)
        w.string(key: Self.keyBody, content.body)
        w.string(key: Self.keyCallToAction, content.callToAction)
        w.string(key: Self.keyAdvertiser, content.advertiser)
        if let icon = content.icon {
            w.varint(Self.keyIcon)
            w.varint(UInt64(icon.protoSize))
            icon.write(to: &w)
        }
        if let image = content.image {
            w.varint(Self.keyImage)
            w.varint(UInt64(image.protoSize))
            image.write(to: &w)
        }
        if let rating = content.starRating { w.doubleField(key: Self.keyStarRating, rating) }
        w.string(key: Self.keyPrice, content.price ?? "")
        w.string(key: Self.keyStore, content.store ?? "")
        w.string(key: Self.keyClickURL, content.clickURL)
        for tracker in content.impressionTrackers { w.string(key: Self.keyImpressionTrackers, tracker, always: true) }
        for tracker in content.clickTrackers { w.string(key: Self.keyClickTrackers, tracker, always: true) }
        w.string(key: Self.keyAdChoicesURL, content.adChoicesURL ?? "")
        w.varintField(key: Self.keyLoadedAt, UInt64(bitPattern: loadedAt.unixMilliseconds))
        w.varintField(key: Self.keyExpiresAt, UInt64(bitPattern: expiresAt.unixMilliseconds))
        w.varintField(key: Self.keyShowCount, UInt64(UInt32(wire: showCount)))
        if let fullScreen = creative.fullScreenCreative {
            w.varint(Self.keyFullScreen)
            w.varint(UInt64(fullScreen.protoSize))
            fullScreen.write(to: &w)
        }
    }
}

extension Lease {
    /// The encoded size of the lease's ad, computed once by the caller and passed back in.
    func protoSize(adSize: Int) -> Int {
        var size = ProtoSize.varintField(key: 0x08, id)
        if let slot { size += ProtoSize.string(key: 0x12, slot) }
        return size + ProtoSize.varintField(key: 0x18, UInt64(bitPattern: expiresAt.unixMilliseconds))
            + ProtoSize.delimited(key: 0x22, adSize)
    }

    func write(to w: inout ProtoWriter, adSize: Int) {
        writeHeader(to: &w, adSize: adSize)
        ad.write(to: &w)
    }

    /// Everything up to the ad's bytes: the lease's own fields, then the ad's key and length.
    func writeHeader(to w: inout ProtoWriter, adSize: Int) {
        w.varintField(key: 0x08, id)
        if let slot { w.string(key: 0x12, slot) }  // nil writes nothing, as "" does
        w.varintField(key: 0x18, UInt64(bitPattern: expiresAt.unixMilliseconds))
        w.varint(0x22)
        w.varint(UInt64(adSize))
    }
}

extension BorrowResponseMessage {
    var outcomeWireValue: UInt64 {
        switch outcome {
        case .unspecified: 0
        case .leased: 1
        case .reused: 2
        case .noAdYet: 3
        }
    }

    /// The encoded size and the sizes of the nested lease and ad (computed once).
    func protoSizes() -> (message: Int, lease: Int, ad: Int) {
        var size = ProtoSize.varintField(key: 0x08, outcomeWireValue)
        guard let lease else { return (size, 0, 0) }
        let adSize = lease.ad.protoSize
        let leaseSize = lease.protoSize(adSize: adSize)
        size += ProtoSize.delimited(key: 0x12, leaseSize)
        return (size, leaseSize, adSize)
    }

    func write(to w: inout ProtoWriter, leaseSize: Int, adSize: Int) {
        w.varintField(key: 0x08, outcomeWireValue)
        if let lease {
            w.varint(0x12)
            w.varint(UInt64(leaseSize))
            lease.write(to: &w, adSize: adSize)
        }
    }
}
