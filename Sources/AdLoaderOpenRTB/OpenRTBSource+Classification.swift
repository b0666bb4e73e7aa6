public import AdLoaderCore
public import AdLoaderHTTP

extension OpenRTBSource {
    /// What an exchange's answer means for the loader: bids (possibly none) or a failure class.
    ///
    /// - Transport: refused, unreachable, DNS → `.unreachable`; timeouts and broken
    ///   connections → `.retryable`; a body above the cap or a URL curl refuses → `.final`.
    /// - 204 → no-fill. 200 → the body parsed (a wrong content type or malformed JSON → `.final`).
    /// - 429, 5xx → `.retryable`, with `Retry-After` (seconds) as the least delay.
    /// - Other statuses → `.final`, with the exchange's message.
    public static func classify(
        _ result: Result<HTTPResponse, HTTPError>, layout: NativeAssetLayout = .standard, impressionIDs: Set<String>?,
        media: [OpenRTBMedia] = [.native], floor: BidResponseParser.Floor? = nil
    ) -> Result<BidResponseParser.Outcome, UpstreamError> {
        let response: HTTPResponse
        switch result {
        case .failure(let error):
            switch error.code {
            case .connectionFailed, .nameResolution:
                return .failure(UpstreamError(code: .unreachable, message: "exchange unreachable: \(error.message)"))
            case .timedOut, .transport, .cancelled:
                return .failure(UpstreamError(code: .retryable, message: "\(error.code): \(error.message)"))
            default:
                return .failure(UpstreamError(code: .final, message: "\(error.code): \(error.message)"))
            }
        case .success(let value):
            response = value
        }
        switch response.status {
        case 204:
            return .success(BidResponseParser.Outcome())
        case 200:
            if let type = response.header("content-type"), !type.lowercased().contains("json") {
                return .failure(
                    UpstreamError(
                        code: .final,
                        message:
                            "HTTP 200 with content-type \"\(type)\", expected application/json: \(excerpt(response.body))"
                    ))
            }
            do {
                return .success(
                    try BidResponseParser.parse(
                        response.body, layout: layout, impressionIDs: impressionIDs, media: media, floor: floor))
            } catch {
                return .failure(UpstreamError(code: .final, message: "malformed bid response: \(error.message)"))
            }
        case 429, 500...599:
            var error = UpstreamError(code: .retryable, message: "HTTP \(response.status): \(excerpt(response.body))")
            error.retryAfter = response.header("retry-after").flatMap(retryAfter)
            return .failure(error)
        default:
            return .failure(UpstreamError(code: .final, message: "HTTP \(response.status): \(excerpt(response.body))"))
        }
    }

    /// `Retry-After` in seconds (an HTTP date is not honoured), at most an hour.
    static func retryAfter(_ value: String) -> Duration? {
        guard let seconds = Int(value.trimmingCharacters(" \t")), seconds >= 0 else { return nil }
        return .seconds(min(seconds, 3600))
    }

    /// The start of a body as one printable line, for logs and error messages.
    static func excerpt(_ body: [UInt8], limit: Int = 200) -> String {
        if body.isEmpty { return "(empty body)" }
        var text = ""
        for scalar in String(decoding: body.prefix(limit * 4), as: UTF8.self).unicodeScalars {
            if text.unicodeScalars.count >= limit {
                text += "…"
                break
            }
            text.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
        }
        return text.trimmingCharacters(" ")
    }
}

extension String {
    fileprivate func trimmingCharacters(_ set: String) -> String {
        var view = Substring(self)
        while let first = view.first, set.contains(first) { view = view.dropFirst() }
        while let last = view.last, set.contains(last) { view = view.dropLast() }
        return String(view)
    }
}
