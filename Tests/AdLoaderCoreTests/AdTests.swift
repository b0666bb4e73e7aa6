import AdLoaderCore
import Testing

/// `Ad` keeps its fields in shared copy-on-write storage: copies must still behave as
/// independent values with field-wise equality and hashing, whatever the creative.
@Suite struct AdTests {
    static func ad(id: String = "ad-1", headline: String = "Trail shoes") -> Ad {
        Ad(
            id: id, adUnitID: "feed", loader: "default",
            creative: .native(NativeAdContent(headline: headline, impressionTrackers: ["https://t.example/1"])),
            loadedAt: AdInstant(unixMilliseconds: 1_000), expiresAt: AdInstant(unixMilliseconds: 2_000), showCount: 1)
    }

    static let interstitial = FullScreenCreative(
        media: .markup("<a href=\"https://l.example\"><img src=\"https://c.example/i.jpg\"></a>"),
        orientation: .portrait, width: 1080, height: 1920)

    @Test func mutatingACopyLeavesTheOriginal() {
        let original = Self.ad()
        var copy = original
        copy.showCount += 1
        copy.creative = .native(NativeAdContent(headline: "Changed"))
        copy.id = "ad-2"
        #expect(original.showCount == 1)
        #expect(original.creative.nativeContent?.headline == "Trail shoes")
        #expect(original.id == "ad-1")
        #expect(copy.showCount == 2)
        #expect(copy.creative.nativeContent?.headline == "Changed")
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
        d.creative = .native(NativeAdContent(headline: "Trail shoes", clickTrackers: ["x"]))
        #expect(d != a)
        var e = a
        e.showCount = 1  // written back unchanged: still equal
        #expect(e == a)
        var f = a
        f.creative = .fullScreen(Self.interstitial)
        var g = b
        g.creative = .fullScreen(Self.interstitial)
        #expect(f != a)
        #expect(f == g && f.hashValue == g.hashValue)
        g.creative = .fullScreen(FullScreenCreative(media: .videoURL("https://c.example/v.mp4")))
        #expect(f != g)
    }

    @Test func descriptionListsTheFields() {
        let text = "\(Self.ad())"
        #expect(text.hasPrefix("Ad(id: \"ad-1\", adUnitID: \"feed\", loader: \"default\", creative: "))
        #expect(text.contains("native(AdLoaderModel.NativeAdContent(headline: \"Trail shoes\""))
        #expect(text.hasSuffix("showCount: 1)"))
    }

    @Test func aCreativeFitsItsFormats() {
        let native = AdCreative.native(NativeAdContent(headline: "h"))
        let fullScreen = AdCreative.fullScreen(Self.interstitial)
        #expect(native.fits(.native))
        #expect(native.nativeContent?.headline == "h" && native.fullScreenCreative == nil)
        #expect(fullScreen.fullScreenCreative == Self.interstitial && fullScreen.nativeContent == nil)
        for format in [AdFormat.interstitial, .rewarded, .appOpen] {
            #expect(format.isFullScreen)
            #expect(fullScreen.fits(format))
        }
        // A full-screen native ad (the app lays out the assets itself) serves interstitial and
        // app-open loaders; a rewarded ad is never native assets.
        #expect(native.fits(.interstitial) && native.fits(.appOpen))
        #expect(!native.fits(.rewarded))
        let vast = AdCreative.fullScreen(FullScreenCreative(media: .vastXML("<VAST version=\"4.0\"/>")))
        #expect(vast.fits(.rewarded) && !vast.fits(.native))
        #expect(!AdFormat.native.isFullScreen)
        #expect(!fullScreen.fits(.native))
    }

    @Test func formatNamesRoundTrip() {
        #expect(AdFormat.allCases.map(\.name) == ["native", "interstitial", "rewarded", "appOpen"])
        for format in AdFormat.allCases {
            #expect(AdFormat(name: format.name) == format)
            #expect("\(format)" == format.name)
        }
        #expect(AdFormat(name: "banner") == nil)
        #expect(AdFormat(name: "Native") == nil)
    }
}
