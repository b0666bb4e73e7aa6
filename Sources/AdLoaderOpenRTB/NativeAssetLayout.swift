public import AdLoaderJSON

/// Which native assets a request asked for, by asset id: how a Native 1.2 response's assets
/// (which carry only the id, and sometimes a type) map back to a headline, an icon, and so on.
public struct NativeAssetLayout: Hashable, Sendable {
    /// What one asset is.
    public enum Kind: Hashable, Sendable {
        case title
        /// Image type 1.
        case icon
        /// Image type 3.
        case mainImage
        /// Data type 2 (`desc`).
        case description
        /// Data type 12 (`ctatext`).
        case callToAction
        /// Data type 1 (`sponsored`).
        case sponsoredBy
        /// Data type 3 (`rating`, 0...5).
        case rating
        /// Data type 6 (`price`).
        case price
        /// Any other image or data type: accepted, not shown.
        case other

        /// The kind of a Native 1.2 image type.
        static func image(type: Int?) -> Kind {
            switch type {
            case 1: .icon
            case 3: .mainImage
            default: .other
            }
        }

        /// The kind of a Native 1.2 data type.
        static func data(type: Int?) -> Kind {
            switch type {
            case 1: .sponsoredBy
            case 2: .description
            case 3: .rating
            case 6: .price
            case 12: .callToAction
            default: .other
            }
        }
    }

    /// One requested asset.
    public struct Asset: Hashable, Sendable {
        public var id: Int
        public var kind: Kind
        public var required: Bool

        public init(id: Int, kind: Kind, required: Bool) {
            self.id = id
            self.kind = kind
            self.required = required
        }
    }

    public var assets: [Asset]

    public init(assets: [Asset]) { self.assets = assets }

    /// The kind of the asset with `id`, if the request had one.
    public func kind(of id: Int) -> Kind? { assets.first { $0.id == id }?.kind }

    /// What adloaderd asks for: a title (required, 90 characters), an icon, a main image
    /// (required, at least 300×157), a description, a call to action, sponsored-by, a rating
    /// and a price; ids 1...8 in that order.
    public static let standard = NativeAssetLayout(assets: [
        Asset(id: 1, kind: .title, required: true),
        Asset(id: 2, kind: .icon, required: false),
        Asset(id: 3, kind: .mainImage, required: true),
        Asset(id: 4, kind: .description, required: false),
        Asset(id: 5, kind: .callToAction, required: false),
        Asset(id: 6, kind: .sponsoredBy, required: false),
        Asset(id: 7, kind: .rating, required: false),
        Asset(id: 8, kind: .price, required: false),
    ])

    /// The `native.request` string of ``standard`` (Native 1.2, event trackers for impressions
    /// by image and JavaScript, privacy link supported).
    public static let standardRequestJSON: String = {
        var assets: [String] = []
        for asset in standard.assets {
            let required = asset.required ? 1 : 0
            let body: String
            switch asset.kind {
            case .title: body = #""title":{"len":90}"#
            case .icon: body = #""img":{"type":1,"wmin":50,"hmin":50}"#
            case .mainImage: body = #""img":{"type":3,"wmin":300,"hmin":157}"#
            case .description: body = #""data":{"type":2,"len":140}"#
            case .callToAction: body = #""data":{"type":12,"len":15}"#
            case .sponsoredBy: body = #""data":{"type":1,"len":25}"#
            case .rating: body = #""data":{"type":3}"#
            case .price: body = #""data":{"type":6}"#
            case .other: continue
            }
            assets.append(#"{"id":\#(asset.id),"required":\#(required),\#(body)}"#)
        }
        return #"{"ver":"1.2","context":1,"plcmttype":1,"plcmtcnt":1,"privacy":1,"#
            + #""eventtrackers":[{"event":1,"methods":[1,2]}],"assets":["# + assets.joined(separator: ",") + "]}"
    }()

    /// The layout a Native 1.1/1.2 request (the `native.request` object, or its string, or
    /// `{"native": ...}` around it) describes. Assets without ids get 0, 1, ... in order when
    /// none has one (as Prebid Server assigns them).
    public init(nativeRequest: JSONValue) {
        var root = nativeRequest
        if let text = root.string, let parsed = try? JSONValue.parse(text) { root = parsed }
        if let inner = root["native"], inner.members != nil { root = inner }
        let items = root["assets"]?.array ?? []
        let numbered = items.allSatisfy { $0["id"]?.integer == nil }
        var assets: [Asset] = []
        for (index, item) in items.enumerated() {
            guard let id = numbered ? index : item["id"]?.integer else { continue }
            let kind: Kind =
                if item["title"] != nil {
                    .title
                } else if let image = item["img"] {
                    .image(type: image["type"]?.integer)
                } else if let data = item["data"] {
                    .data(type: data["type"]?.integer)
                } else {
                    .other
                }
            assets.append(Asset(id: id, kind: kind, required: item["required"]?.integer == 1))
        }
        self.assets = assets
    }
}
