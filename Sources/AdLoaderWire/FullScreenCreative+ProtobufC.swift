import AdLoaderModel
internal import CAdLoaderProto

// The full-screen creative on the wire: `FullScreenCreative` in the `creative` oneof of the
// proto's NativeAd (field 60), its media a oneof of markup (1), video_url (2) and vast_xml (7),
// each string carried as the source sent it. Converted
// with protobuf-c structs (decoding, and the reference encoding the tests compare with) and
// encoded by hand for the Borrow and AppOpen answers (below).

extension AdFormat {
    /// The wire value of `NativeAd.format`: 0 (unset) for native, as before the field existed.
    var wireValue: UInt64 {
        switch self {
        case .native: 0
        case .interstitial: 2
        case .rewarded: 3
        case .appOpen: 4
        }
    }

    /// The format of a wire value; 0 and 1 are native, unknown values nil.
    init?(wireValue: UInt64) {
        switch wireValue {
        case 0, 1: self = .native
        case 2: self = .interstitial
        case 3: self = .rewarded
        case 4: self = .appOpen
        default: return nil
        }
    }
}

extension FullScreenCreative.Orientation {
    var wireValue: UInt64 {
        switch self {
        case .any: 0
        case .portrait: 1
        case .landscape: 2
        }
    }
}

extension FullScreenCreative {
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<Adloader__V1__FullScreenCreative> {
        let m = arena.allocate(Adloader__V1__FullScreenCreative.self)
        adloader__v1__full_screen_creative__init(m)
        switch media {
        case .markup(let markup):
            m.pointee.media_case = ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_MARKUP
            m.pointee.markup = arena.cString(markup)
        case .videoURL(let url):
            m.pointee.media_case = ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_VIDEO_URL
            m.pointee.video_url = arena.cString(url)
        case .vastXML(let document):
            m.pointee.media_case = ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_VAST_XML
            m.pointee.vast_xml = arena.cString(document)
        }
        m.pointee.orientation = Adloader__V1__Orientation(rawValue: UInt32(orientation.wireValue))
        m.pointee.width = UInt32(wire: width)
        m.pointee.height = UInt32(wire: height)
        if let reward {
            let r = arena.allocate(Adloader__V1__Reward.self)
            adloader__v1__reward__init(r)
            r.pointee.type = arena.cString(reward.type)
            r.pointee.amount = Int64(reward.amount)
            m.pointee.reward = r
        }
        return m
    }

    /// - Throws: `.badMessage` when the media is missing (none of markup, video_url, vast_xml).
    init(_ m: UnsafePointer<Adloader__V1__FullScreenCreative>) throws(FrameError) {
        let p = m.pointee
        let media: Media
        switch p.media_case {
        case ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_MARKUP: media = .markup(swiftString(p.markup))
        case ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_VIDEO_URL: media = .videoURL(swiftString(p.video_url))
        case ADLOADER__V1__FULL_SCREEN_CREATIVE__MEDIA_VAST_XML: media = .vastXML(swiftString(p.vast_xml))
        default:
            throw FrameError(code: .badMessage, message: "full_screen.media: missing (markup, video_url or vast_xml)")
        }
        let orientation: Orientation =
            switch p.orientation {
            case ADLOADER__V1__ORIENTATION__ORIENTATION_PORTRAIT: .portrait
            case ADLOADER__V1__ORIENTATION__ORIENTATION_LANDSCAPE: .landscape
            default: .any
            }
        let reward = p.reward.map { Reward(type: swiftString($0.pointee.type), amount: Int($0.pointee.amount)) }
        self.init(media: media, orientation: orientation, width: Int(p.width), height: Int(p.height), reward: reward)
    }

    // Hand encoding (ProtoWriter.swift), the same bytes as protobuf-c's.
    private static let keyMarkup: UInt64 = 1 << 3 | 2
    private static let keyVideoURL: UInt64 = 2 << 3 | 2
    private static let keyOrientation: UInt64 = 3 << 3
    private static let keyWidth: UInt64 = 4 << 3
    private static let keyHeight: UInt64 = 5 << 3
    private static let keyReward: UInt64 = 6 << 3 | 2
    private static let keyVASTXML: UInt64 = 7 << 3 | 2

    private var rewardSize: Int? {
        guard let reward else { return nil }
        return ProtoSize.string(key: 0x0A, reward.type)
            + ProtoSize.varintField(key: 0x10, UInt64(bitPattern: Int64(reward.amount)))
    }

    var protoSize: Int {
        // A oneof member is written when set, even when empty.
        var size =
            switch media {
            case .markup(let markup): ProtoSize.delimited(key: Self.keyMarkup, ProtoSize.cStringLength(markup))
            case .videoURL(let url): ProtoSize.delimited(key: Self.keyVideoURL, ProtoSize.cStringLength(url))
            case .vastXML(let document): ProtoSize.delimited(key: Self.keyVASTXML, ProtoSize.cStringLength(document))
            }
        size +=
            ProtoSize.varintField(key: Self.keyOrientation, orientation.wireValue)
            + ProtoSize.varintField(key: Self.keyWidth, UInt64(UInt32(wire: width)))
            + ProtoSize.varintField(key: Self.keyHeight, UInt64(UInt32(wire: height)))
        if let rewardSize { size += ProtoSize.delimited(key: Self.keyReward, rewardSize) }
        return size
    }

    func write(to w: inout ProtoWriter) {
        switch media {
        case .markup(let markup): w.string(key: Self.keyMarkup, markup, always: true)
        case .videoURL(let url): w.string(key: Self.keyVideoURL, url, always: true)
        case .vastXML: break  // field 7: written after the others, in field order as protobuf-c does
        }
        w.varintField(key: Self.keyOrientation, orientation.wireValue)
        w.varintField(key: Self.keyWidth, UInt64(UInt32(wire: width)))
        w.varintField(key: Self.keyHeight, UInt64(UInt32(wire: height)))
        if let reward, let rewardSize {
            w.varint(Self.keyReward)
            w.varint(UInt64(rewardSize))
            w.string(key: 0x0A, reward.type)
            w.varintField(key: 0x10, UInt64(bitPattern: Int64(reward.amount)))
        }
        if case .vastXML(let document) = media { w.string(key: Self.keyVASTXML, document, always: true) }
    }
}
