import AdLoaderCore
import Testing

/// `NativeAd` keeps its fields in shared copy-on-write storage: copies must still behave as
/// independent values with field-wise equality and hashing.
@Suite struct LoaderTypesTests {
    static func ad(id: String = "ad-1", headline: String = "Trail shoes") -> NativeAd {
        NativeAd(
            id: id, adUnitID: "feed", loader: "default",
            content: NativeAdContent(headline: headline, impressionTrackers: ["https://t.example/1"]),
            loadedAt: AdInstant(unixMilliseconds: 1_000), expiresAt: AdInstant(unixMilliseconds: 2_000), showCount: 1)
    }

    @Test func mutatingACopyLeavesTheOriginal() {
        let original = Self.ad()
        var copy = original
        copy.showCount += 1
        copy.content.headline = "Changed"
        copy.id = "ad-2"
        #expect(original.showCount == 1)
        #expect(original.content.headline == "Trail shoes")
        #expect(original.id == "ad-1")
        #expect(copy.showCount == 2)
        #expect(copy.content.headline == "Changed")
        #expect(copy != original)
    }

    @Test func equalityAndHashAreFieldWise() {
        let a = Self.ad()
        let b = Self.ad()  // separate storage, same fields
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        var c = b
        c.expiresAt = AdInstant(unixMilliseconds: 2_001)
        #expect(c != a)
        var d = b
        d.content.clickTrackers = ["x"]
        #expect(d != a)
        var e = a
        e.showCount = 1  // written back unchanged: still equal
        #expect(e == a)
    }

    @Test func descriptionListsTheFields() {
        let text = "\(Self.ad())"
        #expect(text.hasPrefix("NativeAd(id: \"ad-1\", adUnitID: \"feed\", loader: \"default\", content: "))
        #expect(text.hasSuffix("showCount: 1)"))
    }
}
