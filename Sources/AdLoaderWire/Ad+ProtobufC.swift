import AdLoaderModel
import AdLoaderTime
internal import CAdLoaderProto

// Conversions between the core's ad and lease values and their protobuf-c structs.
// Optional Swift fields map to the proto3 defaults: nil <-> "" / 0 / absent sub-message.
// `DeliveredAd.sourceExpiry` does not travel: `expiresAt` already includes it.
//
// The proto's `NativeAd` carries every format: native assets in fields 10..33, or a
// full-screen creative in the `creative` oneof (field 60) with every native field empty, and
// the format (field 4, unset for native).

extension AdImage {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__Image> {
        let m = arena.allocate(Adloader__V1__Image.self)
        adloader__v1__image__init(m)
        m.pointee.url = arena.cString(url)
        m.pointee.width = UInt32(wire: width)
        m.pointee.height = UInt32(wire: height)
        return m
    }

    init(_ m: UnsafePointer<Adloader__V1__Image>) {
        self.init(url: swiftString(m.pointee.url), width: Int(m.pointee.width), height: Int(m.pointee.height))
    }
}

extension Ad {
    /// The native assets the wire carries: the ad's own, or none (all empty) for a
    /// full-screen creative.
    var wireContent: NativeAdContent { creative.nativeContent ?? Self.noNativeContent }

    private static let noNativeContent = NativeAdContent(headline: "")

    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__NativeAd> {
        let content = wireContent
        let m = arena.allocate(Adloader__V1__NativeAd.self)
        adloader__v1__native_ad__init(m)
        m.pointee.id = arena.cString(id)
        m.pointee.ad_unit_id = arena.cString(adUnitID)
        m.pointee.loader = arena.cString(loader)
        m.pointee.format = Adloader__V1__AdFormat(rawValue: UInt32(format.wireValue))
        if let fullScreen = creative.fullScreenCreative {
            m.pointee.creative_case = ADLOADER__V1__NATIVE_AD__CREATIVE_FULL_SCREEN
            m.pointee.full_screen = fullScreen.cMessage(in: arena)
        }
        m.pointee.headline = arena.cString(content.headline)
        m.pointee.body = arena.cString(content.body)
        m.pointee.call_to_action = arena.cString(content.callToAction)
        m.pointee.advertiser = arena.cString(content.advertiser)
        m.pointee.icon = content.icon?.cMessage(in: arena)
        m.pointee.image = content.image?.cMessage(in: arena)
        m.pointee.star_rating = content.starRating ?? 0
        m.pointee.price = arena.cString(content.price ?? "")
        m.pointee.store = arena.cString(content.store ?? "")
        m.pointee.click_url = arena.cString(content.clickURL)
        m.pointee.n_impression_trackers = content.impressionTrackers.count
        m.pointee.impression_trackers = arena.cStringArray(content.impressionTrackers)
        m.pointee.n_click_trackers = content.clickTrackers.count
        m.pointee.click_trackers = arena.cStringArray(content.clickTrackers)
        m.pointee.ad_choices_url = arena.cString(content.adChoicesURL ?? "")
        m.pointee.loaded_at_unix_ms = loadedAt.unixMilliseconds
        m.pointee.expires_at_unix_ms = expiresAt.unixMilliseconds
        m.pointee.show_count = UInt32(wire: showCount)
        return m
    }

    /// - Throws: `.badMessage` for an unknown format or a full-screen creative without media.
    init(_ m: UnsafePointer<Adloader__V1__NativeAd>) throws(FrameError) {
        let p = m.pointee
        guard let format = AdFormat(wireValue: UInt64(p.format.rawValue)) else {
            throw FrameError(code: .badMessage, message: "ad.format: unknown value \(p.format.rawValue)")
        }
        if p.creative_case == ADLOADER__V1__NATIVE_AD__CREATIVE_FULL_SCREEN, let fullScreen = p.full_screen {
            self.init(
                id: swiftString(p.id), adUnitID: swiftString(p.ad_unit_id), loader: swiftString(p.loader),
                creative: .fullScreen(try FullScreenCreative(fullScreen)), format: format.isFullScreen ? format : nil,
                loadedAt: AdInstant(unixMilliseconds: p.loaded_at_unix_ms),
                expiresAt: AdInstant(unixMilliseconds: p.expires_at_unix_ms), showCount: Int(p.show_count))
            return
        }
        let content = NativeAdContent(
            headline: swiftString(p.headline), body: swiftString(p.body), callToAction: swiftString(p.call_to_action),
            advertiser: swiftString(p.advertiser), icon: p.icon.map { AdImage($0) }, image: p.image.map { AdImage($0) },
            starRating: p.star_rating == 0 ? nil : p.star_rating, price: nonEmpty(swiftString(p.price)),
            store: nonEmpty(swiftString(p.store)), clickURL: swiftString(p.click_url),
            impressionTrackers: swiftStrings(p.impression_trackers, count: p.n_impression_trackers),
            clickTrackers: swiftStrings(p.click_trackers, count: p.n_click_trackers),
            adChoicesURL: nonEmpty(swiftString(p.ad_choices_url)))
        self.init(
            id: swiftString(p.id), adUnitID: swiftString(p.ad_unit_id), loader: swiftString(p.loader),
            creative: .native(content), format: format,
            loadedAt: AdInstant(unixMilliseconds: p.loaded_at_unix_ms),
            expiresAt: AdInstant(unixMilliseconds: p.expires_at_unix_ms), showCount: Int(p.show_count))
    }
}

extension Lease {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__Lease> {
        let m = arena.allocate(Adloader__V1__Lease.self)
        adloader__v1__lease__init(m)
        m.pointee.lease_id = id
        m.pointee.slot_key = arena.cString(slot ?? "")
        m.pointee.expires_at_unix_ms = expiresAt.unixMilliseconds
        m.pointee.ad = ad.cMessage(in: arena)
        return m
    }

    /// - Throws: `.badMessage` when the lease carries no ad.
    init(_ m: UnsafePointer<Adloader__V1__Lease>) throws(FrameError) {
        let p = m.pointee
        guard let ad = p.ad else { throw FrameError(code: .badMessage, message: "lease.ad: missing") }
        self.init(
            id: p.lease_id, slot: nonEmpty(swiftString(p.slot_key)),
            expiresAt: AdInstant(unixMilliseconds: p.expires_at_unix_ms), ad: try Ad(ad))
    }
}

/// nil for "", else the string: proto3 strings have no presence.
@inline(__always)
func nonEmpty(_ s: String) -> String? { s.isEmpty ? nil : s }
