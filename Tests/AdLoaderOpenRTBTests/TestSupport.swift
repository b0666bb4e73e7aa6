import AdLoaderHTTP
import AdLoaderJSON
import AdLoaderLogging

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of `fixtures/NAME` beside this file (a clean clone has them; no Foundation).
func fixtureBytes(_ name: String, filePath: String = #filePath) -> [UInt8] {
    let folder = filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    guard let file = fopen("\(folder)/fixtures/\(name)", "rb") else { return [] }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes
}

/// A fixture (prebid-server adapter test JSON) parsed.
func fixture(_ name: String) throws -> JSONValue { try JSONValue.parse(bytes: fixtureBytes(name)) }

/// Re-encodes a parsed value as compact JSON (for feeding a mocked body back to the parser).
func encode(_ value: JSONValue) -> String {
    var writer = JSONWriter()
    write(value, into: &writer)
    return writer.text
}

private func write(_ value: JSONValue, into writer: inout JSONWriter) {
    switch value {
    case .null: writer.nullValue()
    case .bool(let flag): writer.value(flag)
    case .number(_, let text): writer.rawValue(text)
    case .string(let text): writer.value(text)
    case .array(let items):
        writer.beginArray()
        for item in items { write(item, into: &writer) }
        writer.endArray()
    case .object(let members):
        writer.beginObject()
        for (key, item) in members {
            writer.key(key)
            write(item, into: &writer)
        }
        writer.endObject()
    }
}

/// An ``HTTPClient`` that records requests and answers when the test says.
final class FakeHTTPClient: HTTPClient {
    private(set) var requests: [HTTPRequest] = []
    private var completions: [(Result<HTTPResponse, HTTPError>) -> Void] = []
    /// Answers given at once to each later request (still after `send` returns: see `flush`).
    var autoAnswer: ((HTTPRequest) -> Result<HTTPResponse, HTTPError>)?
    private var automatic: [(Result<HTTPResponse, HTTPError>) -> Void] = []
    private var automaticResults: [Result<HTTPResponse, HTTPError>] = []

    func send(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, HTTPError>) -> Void) {
        requests.append(request)
        if let autoAnswer {
            automatic.append(completion)
            automaticResults.append(autoAnswer(request))
        } else {
            completions.append(completion)
        }
    }

    var pendingCount: Int { completions.count }

    /// Answers the oldest pending request.
    func answer(_ result: Result<HTTPResponse, HTTPError>) {
        completions.removeFirst()(result)
    }

    /// Delivers the automatic answers (and any they cause), as the loop would later.
    func flush() {
        while !automatic.isEmpty {
            let completion = automatic.removeFirst()
            let result = automaticResults.removeFirst()
            completion(result)
        }
    }
}

final class CapturingLogHandler: LogHandler {
    private(set) var lines: [String] = []
    func write(line: String) { lines.append(line) }
}
