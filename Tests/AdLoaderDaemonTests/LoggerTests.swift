import AdLoaderJSON
import Testing

@testable import AdLoaderDaemon
@testable import AdLoaderLogging
@testable import AdLoaderUV

final class CapturingLogHandler: LogHandler {
    var lines: [String] = []
    func write(line: String) { lines.append(line) }
}

@Suite struct LoggerTests {
    @Test func writesOneJSONObjectPerLineWithLevelTimeMessageAndFields() throws {
        let handler = CapturingLogHandler()
        let logger = Logger(level: .info, handler: handler).with(["connection": 7])
        logger.debug("dropped")
        logger.warning("closed \"now\"\n", ["reason": "idle", "bytes": .int(12), "paused": true])
        #expect(handler.lines.count == 1)
        let line = try #require(handler.lines.first)
        #expect(line.hasPrefix(#"{"level":"warning","time":""#))
        #expect(line.contains(#""message":"closed \"now\"\n""#))
        #expect(line.hasSuffix(#","connection":7,"reason":"idle","bytes":12,"paused":true}"#))
        let time = try #require(line.split(separator: "\"").dropFirst(7).first)
        #expect(time.count == 24 && time.hasSuffix("Z"), "\(time)")
        let parsed = try JSONValue.parse(line)
        guard case .object(let members) = parsed else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["level", "time", "message", "connection", "reason", "bytes", "paused"])
    }
}
