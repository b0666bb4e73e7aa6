import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// An interstitial or app-open ad bought as native assets (OpenRTB `instl` with `native`):
/// the native fields and its format, no `full_screen`; encoded by hand and by protobuf-c alike,
/// decoded with its format.
struct NativeFullScreenAdTests {
    @Test(arguments: [AdFormat.interstitial, .appOpen])
    func aNativeFullScreenAdKeepsItsFormatOnTheWire(format: AdFormat) throws {
        var ad = Fixtures.ad(id: "nfs-1")
        ad.format = format
        let message = BorrowResponseMessage(outcome: .leased, lease: Fixtures.lease(ad: ad))
        #expect(message.encoded() == message.encodedWithProtobufC())
        let decoded = try BorrowResponseMessage(decoding: message.encoded())
        #expect(decoded.lease?.ad.format == format)
        #expect(decoded.lease?.ad.creative.nativeContent != nil)
        #expect(decoded.lease?.ad == ad)
    }
}
