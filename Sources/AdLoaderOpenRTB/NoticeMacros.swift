public import AdLoaderCore

/// The OpenRTB 2.6 substitution macros (`${AUCTION_PRICE}` and the others) in notice and
/// tracker URLs.
public struct NoticeMacros: Hashable, Sendable {
    public var auctionID: String
    public var bidID: String
    public var impressionID: String
    public var seatID: String
    public var adID: String
    /// The clearing price: in a first-price auction the bid's own price.
    public var price: Double
    public var currency: String
    /// `${AUCTION_LOSS}`: a loss reason code; nil leaves it empty.
    public var lossReason: Int?

    public init(
        auctionID: String, bidID: String, impressionID: String, seatID: String, adID: String, price: Double,
        currency: String, lossReason: Int? = nil
    ) {
        self.auctionID = auctionID
        self.bidID = bidID
        self.impressionID = impressionID
        self.seatID = seatID
        self.adID = adID
        self.price = price
        self.currency = currency
        self.lossReason = lossReason
    }

    /// The price as a URL-safe decimal, e.g. `0.86403` (no exponent).
    static func format(_ price: Double) -> String {
        guard price.isFinite, price >= 0 else { return "0" }
        // Micros, then trailing zeros removed: exact for every price an exchange sends.
        let micros = Int64((price * 1_000_000).rounded())
        let whole = micros / 1_000_000
        var fraction = String(micros % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }

    /// `url` with every known macro replaced (a URL without `${` is returned as it is). Values
    /// are percent-encoded; `${AUCTION_MBR}` and `${AUCTION_MIN_TO_WIN}`, unknown here, become empty.
    public func substitute(in url: String) -> String {
        guard url.contains("${") else { return url }
        let values: [(String, String)] = [
            ("${AUCTION_ID}", auctionID), ("${AUCTION_BID_ID}", bidID), ("${AUCTION_IMP_ID}", impressionID),
            ("${AUCTION_SEAT_ID}", seatID), ("${AUCTION_AD_ID}", adID), ("${AUCTION_PRICE}", Self.format(price)),
            ("${AUCTION_CURRENCY}", currency), ("${AUCTION_MBR}", ""), ("${AUCTION_MIN_TO_WIN}", ""),
            ("${AUCTION_LOSS}", lossReason.map(String.init) ?? ""),
        ]
        var result = url
        for (macro, value) in values where result.contains(macro) {
            result = result.replacing(macro, with: Self.percentEncoded(value))
        }
        return result
    }

    /// Unreserved characters as they are, the rest %XX.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return result
    }
}

/// OpenRTB 2.6 loss reason codes (`${AUCTION_LOSS}`, list 5.25) for a bid that was not shown: one
/// dropped while its response was read, or an ad dropped unshown later. Codes 1000 and above
/// are exchange specific (OpenRTB: "communicated to bidders a priori"); adloaderd's two are in
/// Proto/PROTOCOL.md, "Loss notices".
public enum LossReason {
    /// 1: internal error (the ad was removed for a reason no other code names).
    public static let internalError = 1
    /// 2: impression opportunity expired (the ad reached its lifetime or `bid.exp` unshown).
    public static let expired = 2
    /// 3: invalid bid response: a bid not usable as sent (not an object, no or an unknown `impid`,
    /// native markup that does not decode or lacks an asset the layout requires).
    public static let invalidBidResponse = 3
    /// 7: missing markup (no `adm`, or an empty one).
    public static let missingMarkup = 7
    /// 9: missing bid price (absent, negative or not a number).
    public static let missingBidPrice = 9
    /// 100: bid was below the auction floor: its price under the impression's `bidfloor`, the
    /// response in the floor's currency (`bidfloorcur`).
    public static let belowFloor = 100
    /// 102: lost to a higher bid for the same impression in the same response.
    public static let lostToHigherBid = 102
    /// 200: creative filtered, general, reason unknown: a client invalidated its creative (a
    /// Return with `invalidate`, its reason free text the exchange has no code for; 202
    /// "disapproved by exchange" would name the exchange's own review, which this is not), or the
    /// loader found it does not fit its format.
    public static let creativeFiltered = 200
    /// 204: creative filtered, incorrect creative format: a bid of a medium the impression did not
    /// ask for (its `mtype`, or its markup read without one), or video markup that is not VAST.
    public static let incorrectCreativeFormat = 204
    /// 1000 (adloaderd's own): lost to a dropped pool: the ad's loader was removed or changed by a
    /// configuration reload, disabled, or the daemon shut down without a pool store keeping it.
    public static let droppedPool = 1000
    /// 1001 (adloaderd's own): dropped unleased to make room under the daemon's memory budget
    /// (`limits.maximumAds`) for a pool with demand.
    public static let memoryBudget = 1001

    /// The codes a bid dropped while its response was read can get, in the order
    /// `adloader_source_bids_dropped_total` lists them.
    public static let droppedBidCodes = [
        invalidBidResponse, missingMarkup, missingBidPrice, belowFloor, lostToHigherBid, incorrectCreativeFormat,
    ]

    /// The `reason` label of `adloader_source_bids_dropped_total` for a dropped bid's code:
    /// `invalid_bid` (3), `missing_markup` (7), `missing_price` (9), `below_floor` (100), `outbid`
    /// (102), `wrong_format` (204); `other` for a code no dropped bid gets.
    public static func metricLabel(for code: Int) -> String {
        switch code {
        case invalidBidResponse: "invalid_bid"
        case missingMarkup: "missing_markup"
        case missingBidPrice: "missing_price"
        case belowFloor: "below_floor"
        case lostToHigherBid: "outbid"
        case incorrectCreativeFormat: "wrong_format"
        default: "other"
        }
    }

    /// The code for a drop.
    public static func code(for reason: AdDropReason) -> Int {
        switch reason {
        case .expired: expired
        case .invalidated: creativeFiltered
        case .disabled, .shutdown, .reconfigured: droppedPool
        case .memoryBudget: memoryBudget
        case .consumed: internalError
        }
    }
}
