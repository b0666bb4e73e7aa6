public import AdLoaderModel
internal import CAdLoaderProto

/// `PrefetchRequest`: tops the pool of (loader, ad unit) up.
public struct PrefetchRequestMessage: WireMessage {
    /// Required; the server answers INVALID_ARGUMENT when empty.
    public var adUnitID: String
    /// Empty means "default".
    public var loader: String
    /// Ads the caller will want soon: the pool fills to the larger of this and its demand
    /// target; 0 = the demand target alone. The server refuses more than the loader's
    /// `maximumRetainedAdvertisements` (INVALID_ARGUMENT, field `count`).
    public var count: UInt32
    /// The device's privacy signals; nil: the loader's default consent class.
    public var privacy: PrivacySignalsMessage?

    public init(adUnitID: String, loader: String = "", count: UInt32 = 0, privacy: PrivacySignalsMessage? = nil) {
        self.adUnitID = adUnitID
        self.loader = loader
        self.count = count
        self.privacy = privacy
    }

    public var stringFieldWithNUL: String? {
        firstFieldWithNUL(["ad_unit_id": adUnitID, "loader": loader])
            ?? privacy?.stringFields.sorted { $0.key < $1.key }.first { $0.value.utf8.contains(0) }?.key
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "PrefetchRequest", unpack: adloader__v1__prefetch_request__unpack,
            free: adloader__v1__prefetch_request__free_unpacked
        ) { m in
            PrefetchRequestMessage(
                adUnitID: swiftString(m.pointee.ad_unit_id), loader: swiftString(m.pointee.loader),
                count: m.pointee.count,
                privacy: m.pointee.privacy.map { PrivacySignalsMessage($0.pointee) })
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__PrefetchRequest()
            adloader__v1__prefetch_request__init(&m)
            m.ad_unit_id = arena.cString(adUnitID)
            m.loader = arena.cString(loader)
            m.count = count
            m.privacy = privacy?.cMessage(in: arena)
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `PrefetchResponse`: the pool after a prefetch.
public struct PrefetchResponseMessage: WireMessage {
    public var result: PrefetchResult

    public init(result: PrefetchResult) { self.result = result }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "PrefetchResponse", unpack: adloader__v1__prefetch_response__unpack,
            free: adloader__v1__prefetch_response__free_unpacked
        ) { m in
            let p = m.pointee
            return PrefetchResponseMessage(
                result: PrefetchResult(
                    available: Int(p.available), inFlight: Int(p.in_flight), requested: Int(p.requested)))
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        var m = Adloader__V1__PrefetchResponse()
        adloader__v1__prefetch_response__init(&m)
        m.available = UInt32(wire: result.available)
        m.in_flight = UInt32(wire: result.inFlight)
        m.requested = UInt32(wire: result.requested)
        appendPacked(&m, to: &buffer)
    }
}
