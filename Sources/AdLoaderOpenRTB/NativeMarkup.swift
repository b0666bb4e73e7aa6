import AdLoaderCore
import AdLoaderJSON

/// Native 1.0–1.2 response markup (`adm`) to a ``NativeAdContent``.
enum NativeMarkup {
    /// The creative in `markup` (a JSON string or object, `{"native": ...}` or the bare root),
    /// its assets mapped by id through `layout` (or by an asset's own `type`); fails when a
    /// required asset, the title or the click URL is missing.
    static func content(of markup: JSONValue, layout: NativeAssetLayout) -> Result<
        NativeAdContent, BidResponseParser.ParseError
    > {
        func fail(_ message: String) -> Result<NativeAdContent, BidResponseParser.ParseError> {
            .failure(BidResponseParser.ParseError(message: message))
        }
        var root = markup
        if let text = markup.string {
            do {
                root = try JSONValue.parse(text)
            } catch {
                return fail("adm is not JSON (byte \(error.offset): \(error.message))")
            }
        }
        if let inner = root["native"], inner.members != nil { root = inner }
        guard root.members != nil else { return fail("adm is \(root.kind), not a native object") }
        var content = NativeAdContent(headline: "")
        var present: Set<Int> = []
        var presentKinds: Set<NativeAssetLayout.Kind> = []
        for asset in root["assets"]?.array ?? [] {
            let id = asset["id"]?.integer
            var kind = id.flatMap(layout.kind(of:))
            var filled = false
            if let title = asset["title"] {
                if let text = title["text"]?.string, !text.isEmpty {
                    content.headline = text
                    filled = true
                }
                kind = .title
            } else if let image = asset["img"] {
                if let type = image["type"]?.integer { kind = .image(type: type) }
                if let url = image["url"]?.string, !url.isEmpty {
                    let value = AdImage(url: url, width: image["w"]?.integer ?? 0, height: image["h"]?.integer ?? 0)
                    switch kind {
                    case .icon: content.icon = value
                    case .mainImage: content.image = value
                    default: break
                    }
                    filled = true
                }
            } else if let data = asset["data"] {
                if let type = data["type"]?.integer { kind = .data(type: type) }
                let value = data["value"]?.string ?? data["value"]?.number.map { String($0) } ?? ""
                if !value.isEmpty {
                    filled = true
                    switch kind {
                    case .description: content.body = value
                    case .callToAction: content.callToAction = value
                    case .sponsoredBy: content.advertiser = value
                    case .rating: content.starRating = Double(value).flatMap { (0...5).contains($0) ? $0 : nil }
                    case .price: content.price = value
                    default: break
                    }
                }
            }
            if filled {
                // Present under its id only as what the request asked for there: an image the
                // response types as something else (an icon at the main image's id) is not it.
                let expected = id.flatMap(layout.kind(of:))
                if let id, expected == nil || expected == .other || expected == kind { present.insert(id) }
                if let kind, kind != .other { presentKinds.insert(kind) }
            }
        }
        // A required asset is there under its id, or as an asset of its kind (a title, a typed
        // image or data) under another id: exchanges renumber assets the request left unnumbered.
        for required in layout.assets
        where required.required && !present.contains(required.id)
            && (required.kind == .other || !presentKinds.contains(required.kind))
        {
            return fail("required asset \(required.id) (\(required.kind)) missing")
        }
        for required in layout.assets where required.required {
            let missing =
                switch required.kind {
                case .icon: content.icon == nil
                case .mainImage: content.image == nil
                default: false
                }
            if missing { return fail("required asset \(required.id) (\(required.kind)) missing") }
        }
        guard !content.headline.isEmpty else { return fail("no title") }
        guard let link = root["link"], let url = link["url"]?.string, !url.isEmpty else { return fail("no link.url") }
        content.clickURL = url
        content.clickTrackers = link["clicktrackers"]?.array?.compactMap(\.string) ?? []
        var impressions = root["imptrackers"]?.array?.compactMap(\.string) ?? []
        for tracker in root["eventtrackers"]?.array ?? [] {
            // Event 1 (impression) by method 1 (image pixel); JavaScript trackers need a web view.
            if tracker["event"]?.integer == 1, tracker["method"]?.integer == 1, let url = tracker["url"]?.string {
                impressions.append(url)
            }
        }
        content.impressionTrackers = impressions
        if let privacy = root["privacy"]?.string, !privacy.isEmpty { content.adChoicesURL = privacy }
        return .success(content)
    }
}
