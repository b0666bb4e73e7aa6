import AdLoaderCore
import Testing

@testable import AdLoaderOpenRTB

struct NoticeMacrosTests {
    let macros = NoticeMacros(
        auctionID: "auction 1", bidID: "b-1", impressionID: "2", seatID: "seat", adID: "ad", price: 0.86403,
        currency: "USD")

    @Test func everyMacroIsSubstitutedAndEncoded() {
        let url =
            "https://x/win?a=${AUCTION_ID}&b=${AUCTION_BID_ID}&i=${AUCTION_IMP_ID}&s=${AUCTION_SEAT_ID}"
            + "&ad=${AUCTION_AD_ID}&p=${AUCTION_PRICE}&c=${AUCTION_CURRENCY}&m=${AUCTION_MBR}&l=${AUCTION_LOSS}&p2=${AUCTION_PRICE}"
        #expect(
            macros.substitute(in: url)
                == "https://x/win?a=auction%201&b=b-1&i=2&s=seat&ad=ad&p=0.86403&c=USD&m=&l=&p2=0.86403")
    }

    @Test func lossReasonAndUnknownMacros() {
        var loss = macros
        loss.lossReason = LossReason.code(for: .expired)
        #expect(loss.substitute(in: "l=${AUCTION_LOSS}&x=${OTHER}") == "l=2&x=${OTHER}")
        #expect(macros.substitute(in: "https://plain") == "https://plain")
    }

    @Test(arguments: [
        (0.0, "0"), (1.0, "1"), (0.5, "0.5"), (1e-7, "0"), (12.345678, "12.345678"), (0.000001, "0.000001"),
        (Double.nan, "0"), (-1.0, "0"),
    ])
    func pricesAreDecimalWithoutExponent(price: Double, text: String) {
        #expect(NoticeMacros.format(price) == text)
    }

    @Test func lossReasonCodes() {
        #expect(LossReason.code(for: .expired) == 2)
        #expect(LossReason.code(for: .invalidated) == 200)
        // A pool dropped (shut down, disabled, reloaded away) has a code of its own, as the
        // memory budget has: neither is "internal error".
        #expect(LossReason.code(for: .shutdown) == 1000)
        #expect(LossReason.code(for: .disabled) == 1000)
        #expect(LossReason.code(for: .reconfigured) == 1000)
        #expect(LossReason.code(for: .memoryBudget) == 1001)
        #expect(LossReason.code(for: .consumed) == 1)
    }
}
