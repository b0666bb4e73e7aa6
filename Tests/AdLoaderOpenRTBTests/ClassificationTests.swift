import AdLoaderCore
import AdLoaderHTTP
import Testing

@testable import AdLoaderOpenRTB

struct ClassificationTests {
    func classify(_ result: Result<HTTPResponse, HTTPError>) -> Result<BidResponseParser.Outcome, UpstreamError> {
        OpenRTBSource.classify(result, impressionIDs: ["1"])
    }

    func code(_ result: Result<HTTPResponse, HTTPError>) -> UpstreamError.Code? {
        if case .failure(let error) = classify(result) { error.code } else { nil }
    }

    @Test func transportFailures() {
        #expect(code(.failure(HTTPError(code: .connectionFailed, message: "refused"))) == .unreachable)
        #expect(code(.failure(HTTPError(code: .nameResolution, message: "dns"))) == .unreachable)
        #expect(code(.failure(HTTPError(code: .timedOut, message: "slow"))) == .retryable)
        #expect(code(.failure(HTTPError(code: .transport, message: "reset"))) == .retryable)
        #expect(code(.failure(HTTPError(code: .responseTooLarge, message: "big"))) == .final)
        #expect(code(.failure(HTTPError(code: .badRequest, message: "url"))) == .final)
    }

    @Test(arguments: [
        (429, UpstreamError.Code.retryable), (500, .retryable), (503, .retryable), (400, .final), (401, .final),
        (404, .final), (301, .final),
    ])
    func statuses(status: Int, expected: UpstreamError.Code) {
        #expect(code(.success(HTTPResponse(status: status, body: Array("nope".utf8)))) == expected)
    }

    @Test func badRequestCarriesTheExchangesMessage() throws {
        let body = Array("Invalid request: imp[0].native.request.assets must have unique ids\n\u{1}".utf8)
        guard case .failure(let error) = classify(.success(HTTPResponse(status: 400, body: body))) else {
            Issue.record("not a failure")
            return
        }
        #expect(error.message == "HTTP 400: Invalid request: imp[0].native.request.assets must have unique ids")
    }

    @Test func retryAfterSecondsIsHonouredAndBounded() {
        func after(_ value: String) -> Duration? {
            let response = HTTPResponse(status: 429, headers: [HTTPHeader("retry-after", value)])
            if case .failure(let error) = classify(.success(response)) { return error.retryAfter }
            return nil
        }
        #expect(after("7") == .seconds(7))
        #expect(after(" 2 ") == .seconds(2))
        #expect(after("999999") == .seconds(3600))
        #expect(after("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        #expect(after("-3") == nil)
    }

    @Test func contentTypeAndMalformedBodiesAreFinal() {
        let html = HTTPResponse(
            status: 200, headers: [HTTPHeader("content-type", "text/html")], body: Array("<html>".utf8))
        #expect(code(.success(html)) == .final)
        let broken = HTTPResponse(
            status: 200, headers: [HTTPHeader("content-type", "application/json; charset=utf-8")], body: Array("{".utf8)
        )
        #expect(code(.success(broken)) == .final)
        let fine = HTTPResponse(
            status: 200, headers: [HTTPHeader("content-type", "application/json")], body: Array("{}".utf8))
        #expect((try? classify(.success(fine)).get())?.isNoFill == true)
    }
}
