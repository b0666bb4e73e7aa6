internal import CHTTPParser

/// Incremental HTTP/1.x request parser over Debian's `libhttp-parser` (nodejs/http-parser 2.9).
///
/// Why this parser: it is the one packaged for Debian 12 as a plain C library
/// (`libhttp-parser-dev`; its successor llhttp is not packaged there), it is small, allocates
/// nothing, and takes bytes in any split (one at a time, several requests per buffer) through
/// callbacks, which fits a libuv read callback directly. It has run in front of node.js for a
/// decade and is strict by default (`HTTP_PARSER_STRICT`). The admin listener's own limits —
/// head size, header count, no body — are enforced here on top of it.
///
/// Feed it what a connection reads; it returns every request whose head completed. After an
/// error it refuses more bytes: the connection answers the error and closes.
///
/// - Important: loop-confined, one per connection.
public final class HTTPRequestParser {
    private let limits: AdminLimits
    private let parser: UnsafeMutablePointer<http_parser>
    private let settings: UnsafeMutablePointer<http_parser_settings>
    private var failure: HTTPRequestError?
    private var completed: [HTTPRequestHead] = []
    // The request being parsed.
    private var target: [UInt8] = []
    private var headers: [HTTPRequestHead.Header] = []
    private var field: [UInt8] = []
    private var value: [UInt8] = []
    private var inValue = false
    private var headBytes = 0
    /// Whether a request has begun and its head has not completed (the request timeout runs).
    public private(set) var isMidRequest = false

    public init(limits: AdminLimits) {
        self.limits = limits
        parser = .allocate(capacity: 1)
        settings = .allocate(capacity: 1)
        http_parser_init(parser, HTTP_REQUEST)
        http_parser_settings_init(settings)
        settings.pointee.on_message_begin = { parser in owner(parser).messageBegan() }
        settings.pointee.on_url = { parser, at, length in owner(parser).url(at, length) }
        settings.pointee.on_header_field = { parser, at, length in owner(parser).headerField(at, length) }
        settings.pointee.on_header_value = { parser, at, length in owner(parser).headerValue(at, length) }
        settings.pointee.on_headers_complete = { parser in owner(parser).headersCompleted() }
        settings.pointee.on_message_complete = { parser in owner(parser).messageCompleted() }
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        parser.deallocate()
        settings.deallocate()
    }

    /// Parses `bytes`.
    /// - Returns: the requests whose heads completed in these bytes, in order.
    /// - Throws: ``HTTPRequestError`` for malformed bytes or a limit passed; every later call
    ///   throws it again.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(HTTPRequestError) -> [HTTPRequestHead] {
        if let failure { throw failure }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return [] }
        let parsed = http_parser_execute(parser, settings, base.assumingMemoryBound(to: CChar.self), bytes.count)
        let errno = CHTTPParser_errno(parser)
        if failure == nil, errno != HPE_OK.rawValue || parsed != bytes.count {
            failure = HTTPRequestError(code: .malformed, message: Self.describe(errno))
        }
        // Requests that completed before the bad bytes in the same read are dropped with them:
        // the connection answers the error and closes.
        if let failure {
            completed.removeAll()
            throw failure
        }
        defer { completed.removeAll(keepingCapacity: true) }
        return completed
    }

    private static func describe(_ errno: UInt32) -> String {
        let code = http_errno(rawValue: errno)
        let name = String(cString: http_errno_name(code))
        let text = String(cString: http_errno_description(code))
        return "\(name): \(text)"
    }

    // MARK: Callbacks (0 continues, nonzero stops the parser with HPE_CB_*)

    private func messageBegan() -> Int32 {
        isMidRequest = true
        target.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        field.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
        inValue = false
        headBytes = 0
        return 0
    }

    private func url(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard count(length) else { return 1 }
        append(at, length, to: &target)
        return 0
    }

    private func headerField(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard count(length) else { return 1 }
        if inValue {
            guard finishHeader() else { return 1 }
        }
        append(at, length, to: &field)
        return 0
    }

    private func headerValue(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard count(length) else { return 1 }
        inValue = true
        append(at, length, to: &value)
        return 0
    }

    private func headersCompleted() -> Int32 {
        if inValue {
            guard finishHeader() else { return 1 }
        }
        // http_parser takes any one-digit version; this server speaks HTTP/1.0 and 1.1.
        if parser.pointee.http_major != 1 || parser.pointee.http_minor > 1 {
            failure = HTTPRequestError(
                code: .malformed,
                message: "unsupported version HTTP/\(parser.pointee.http_major).\(parser.pointee.http_minor)")
            return 1
        }
        if CHTTPParser_isChunked(parser) != 0
            || (parser.pointee.content_length > 0
                && parser.pointee.content_length != UInt64.max)
        {
            failure = HTTPRequestError(code: .bodyNotAllowed, message: "the admin server accepts no request body")
            return 1
        }
        return 0
    }

    private func messageCompleted() -> Int32 {
        let method = String(cString: http_method_str(http_method(rawValue: CHTTPParser_method(parser))))
        completed.append(
            HTTPRequestHead(
                method: method, target: String(decoding: target, as: UTF8.self), headers: headers,
                keepAlive: http_should_keep_alive(parser) != 0))
        isMidRequest = false
        return 0
    }

    // MARK: Limits

    private func count(_ length: Int) -> Bool {
        headBytes += length
        if headBytes > limits.maxRequestHeadBytes {
            failure = HTTPRequestError(
                code: .headTooLarge, message: "request head above \(limits.maxRequestHeadBytes) bytes")
            return false
        }
        return true
    }

    private func finishHeader() -> Bool {
        if headers.count >= limits.maxHeaderCount {
            failure = HTTPRequestError(
                code: .tooManyHeaders, message: "more than \(limits.maxHeaderCount) header lines")
            return false
        }
        headers.append(
            .init(name: String(decoding: field, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        field.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
        inValue = false
        return true
    }

    private func append(_ at: UnsafePointer<CChar>?, _ length: Int, to buffer: inout [UInt8]) {
        guard let at, length > 0 else { return }
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
    }
}

private func owner(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTPRequestParser {
    Unmanaged<HTTPRequestParser>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
}
