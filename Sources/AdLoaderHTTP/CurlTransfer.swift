internal import CCurl

/// One request in a ``CurlHTTPClient``: its easy handle, header list and the response as it
/// arrives. Lives in the client's table while curl runs it; curl's data callbacks reach it
/// unretained through their user pointer.
final class CurlTransfer {
    let request: HTTPRequest
    let completion: (Result<HTTPResponse, HTTPError>) -> Void
    private let limit: Int
    private var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var status = 0
    private var headers: [HTTPHeader] = []
    private var body: [UInt8] = []
    private var tooLarge = false

    init(request: HTTPRequest, completion: @escaping (Result<HTTPResponse, HTTPError>) -> Void, limit: Int) {
        self.request = request
        self.completion = completion
        self.limit = limit
    }

    deinit { cleanup() }

    /// Creates and configures the easy handle; nil when curl refuses a setting (a bad URL).
    func prepare(userAgent: String) -> UnsafeMutableRawPointer? {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        var ok = true
        func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }
        check(CCurl_easy_setopt_string(easy, CURLOPT_URL, request.url))
        check(CCurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(CCurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(request.timeout.milliseconds)))
        check(CCurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(request.connectTimeout.milliseconds)))
        // "" = every encoding this libcurl decodes (gzip, deflate, br when built in).
        check(CCurl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))
        check(CCurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS))
        // Waiting for a connection to multiplex on only helps where HTTP/2 is negotiated (TLS,
        // CURL_HTTP_VERSION_2TLS). On plain HTTP it would hold requests behind a connection
        // still being opened, and the wait would eat the request's timeout.
        if request.url.utf8.starts(with: "https:".utf8) || request.url.utf8.starts(with: "HTTPS:".utf8) {
            check(CCurl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        }
        check(CCurl_easy_setopt_string(easy, CURLOPT_USERAGENT, userAgent))
        check(CCurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(CCurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteTrampoline))
        check(CCurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me))
        check(CCurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderTrampoline))
        check(CCurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me))
        if request.method == .post {
            check(CCurl_easy_setopt_long(easy, CURLOPT_POST, 1))
            check(CCurl_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count))
            // COPYPOSTFIELDS copies: the body need not outlive this call.
            check(
                request.body.withUnsafeBufferPointer { buffer in
                    CCurl_easy_setopt_pointer(
                        easy, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
                })
        }
        // "Expect: 100-continue" would cost a round trip on every POST above 1 KiB.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] {
            headerList = curl_slist_append(headerList, line)
        }
        check(CCurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
        return ok ? easy : nil
    }

    /// The result for curl's final code.
    func finish(_ code: CURLcode) -> Result<HTTPResponse, HTTPError> {
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            // Bytes of the request written: 0 when it failed before or while connecting.
            var requestSize = 0
            if let easy { _ = CCurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestSize) }
            let sent = requestSize > 0
            switch code {
            case CURLE_COULDNT_CONNECT: return .failure(HTTPError(code: .connectionFailed, message: message))
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
                return .failure(HTTPError(code: .nameResolution, message: message))
            case CURLE_OPERATION_TIMEDOUT:
                return .failure(HTTPError(code: .timedOut, message: message, requestSent: sent))
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
                return .failure(HTTPError(code: .badRequest, message: message))
            case CURLE_WRITE_ERROR where tooLarge, CURLE_FILESIZE_EXCEEDED:
                return .failure(
                    HTTPError(code: .responseTooLarge, message: "response body above \(limit) bytes", requestSent: true)
                )
            default: return .failure(HTTPError(code: .transport, message: message, requestSent: sent))
            }
        }
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    /// Frees the easy handle and the header list; harmless twice.
    func cleanup() {
        if let easy {
            curl_easy_cleanup(easy)
            self.easy = nil
        }
        if let headerList {
            curl_slist_free_all(headerList)
            self.headerList = nil
        }
    }

    fileprivate func received(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard body.count + data.count <= limit else {
            tooLarge = true
            return false
        }
        body.append(contentsOf: data)
        return true
    }

    fileprivate func receivedHeader(_ data: UnsafeBufferPointer<UInt8>) {
        let line = String(decoding: data, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new status line (after 100 Continue or a redirect): the headers start over.
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
        headers.append(HTTPHeader(name, value))
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var view = self
        while let first = view.first, set.contains(first) { view = view.dropFirst() }
        while let last = view.last, set.contains(last) { view = view.dropLast() }
        return String(view)
    }
}

private func curlWriteTrampoline(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?
) -> Int {
    guard let user else { return 0 }
    let length = size * count
    guard let data, length > 0 else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
    return transfer.received(bytes) ? length : 0
}

private func curlHeaderTrampoline(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let user, let data, length > 0 else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    transfer.receivedHeader(
        UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length))
    return length
}
