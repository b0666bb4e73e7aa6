import Testing

@testable import AdLoaderAdmin

@Suite struct HTTPRequestParserTests {
    private static let get = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/plain\r\n\r\n"

    private func feed(_ parser: HTTPRequestParser, _ text: String) throws -> [HTTPRequestHead] {
        try feed(parser, Array(text.utf8))
    }

    private func feed(_ parser: HTTPRequestParser, _ bytes: [UInt8]) throws -> [HTTPRequestHead] {
        try bytes.withUnsafeBytes { try parser.feed($0) }
    }

    @Test func aWholeRequestGivesItsMethodTargetHeadersAndKeepAlive() throws {
        let requests = try feed(HTTPRequestParser(limits: AdminLimits()), Self.get)
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.method == "GET")
        #expect(request.target == "/metrics?x=1")
        #expect(request.path == "/metrics")
        #expect(request.header("accept") == "text/plain")
        #expect(request.headers.count == 2)
        #expect(request.keepAlive)
    }

    @Test func bytesFedOneAtATimeGiveTheSameRequest() throws {
        let parser = HTTPRequestParser(limits: AdminLimits())
        var requests: [HTTPRequestHead] = []
        for byte in Array(Self.get.utf8) {
            requests += try feed(parser, [byte])
            #expect(parser.isMidRequest == requests.isEmpty)
        }
        #expect(requests == (try feed(HTTPRequestParser(limits: AdminLimits()), Self.get)))
    }

    @Test func pipelinedRequestsInOneBufferComeOutInOrder() throws {
        let text = Self.get + "GET /healthz HTTP/1.1\r\n\r\n" + "GET /readyz HTTP/1.0\r\n\r\n"
        let requests = try feed(HTTPRequestParser(limits: AdminLimits()), text)
        #expect(requests.map(\.path) == ["/metrics", "/healthz", "/readyz"])
        #expect(requests.map(\.keepAlive) == [true, true, false])
    }

    @Test func connectionCloseEndsKeepAlive() throws {
        let requests = try feed(
            HTTPRequestParser(limits: AdminLimits()), "GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(requests.first?.keepAlive == false)
    }

    @Test func otherMethodsParseForTheServerToRefuse() throws {
        let requests = try feed(HTTPRequestParser(limits: AdminLimits()), "DELETE /metrics HTTP/1.1\r\n\r\n")
        #expect(requests.first?.method == "DELETE")
    }

    @Test(arguments: [
        "garbage\r\n\r\n",
        "GET /metrics HTTP/9.9\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nBad Header Line\r\n\r\n",
        "\u{0}\u{1}\u{2}\u{3}\u{ff}",
        "GET / HTTP/1.1\r\nHost: a\r\n\u{7f}\r\n\r\n",
    ])
    func malformedBytesAreRefusedAsMalformedEveryTime(text: String) throws {
        let parser = HTTPRequestParser(limits: AdminLimits())
        let error = #expect(throws: HTTPRequestError.self) { try feed(parser, text) }
        #expect(error?.code == .malformed)
        #expect(error?.code.httpStatus == .badRequest)
        // Refused for good: a well-formed request afterwards is refused too.
        #expect(throws: HTTPRequestError.self) { try feed(parser, Self.get) }
    }

    @Test func aHeadAboveTheLimitIsRefusedEvenWhenSplit() throws {
        var limits = AdminLimits()
        limits.maxRequestHeadBytes = 100
        let parser = HTTPRequestParser(limits: limits)
        #expect(try feed(parser, "GET /" + String(repeating: "a", count: 60)).isEmpty)
        let error = #expect(throws: HTTPRequestError.self) {
            try feed(parser, String(repeating: "a", count: 60) + " HTTP/1.1\r\n\r\n")
        }
        #expect(error?.code == .headTooLarge)
        #expect(error?.code.httpStatus.code == 431)
        // Just under the limit passes.
        #expect(
            try feed(
                HTTPRequestParser(limits: limits), "GET /" + String(repeating: "b", count: 90) + " HTTP/1.1\r\n\r\n"
            ).count == 1)
    }

    @Test func moreHeaderLinesThanTheLimitAreRefused() throws {
        var limits = AdminLimits()
        limits.maxHeaderCount = 3
        let three = "GET / HTTP/1.1\r\n" + (0..<3).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(try feed(HTTPRequestParser(limits: limits), three).first?.headers.count == 3)
        let four = "GET / HTTP/1.1\r\n" + (0..<4).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        let error = #expect(throws: HTTPRequestError.self) { try feed(HTTPRequestParser(limits: limits), four) }
        #expect(error?.code == .tooManyHeaders)
    }

    @Test(arguments: [
        "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
        "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    ])
    func requestBodiesAreRefused(text: String) throws {
        let error = #expect(throws: HTTPRequestError.self) { try feed(HTTPRequestParser(limits: AdminLimits()), text) }
        #expect(error?.code == .bodyNotAllowed)
        #expect(error?.code.httpStatus.code == 413)
    }

    @Test func anEmptyContentLengthIsNoBody() throws {
        let requests = try feed(HTTPRequestParser(limits: AdminLimits()), "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        #expect(requests.count == 1)
    }

    @Test func responsesCarryLengthAndCloseWhenAsked() {
        let response = HTTPResponse(text: "ok\n").with(header: "Allow", "GET")
        let kept = String(decoding: response.encoded(keepAlive: true), as: UTF8.self)
        #expect(kept.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(kept.contains("Content-Length: 3\r\n"))
        #expect(kept.contains("Allow: GET\r\n"))
        #expect(!kept.contains("Connection: close"))
        #expect(kept.hasSuffix("\r\n\r\nok\n"))
        #expect(String(decoding: response.encoded(keepAlive: false), as: UTF8.self).contains("Connection: close\r\n"))
    }
}
