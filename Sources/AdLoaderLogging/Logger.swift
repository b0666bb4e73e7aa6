#if canImport(Glibc)
    import Glibc
#endif

/// How severe a log line is; lines below the logger's level are dropped.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case debug, info, warning, error

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }

    public var description: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One field value of a log line.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByStringInterpolation,
    ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral
{
    case string(String)
    case int(Int64)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(_ value: Int) { self = .int(Int64(value)) }
}

/// Where formatted log lines go.
public protocol LogHandler: AnyObject {
    /// Receives one complete line, without the trailing newline.
    func write(line: String)
}

/// Writes each line to standard error with one `write(2)` (not the `stderr` global, which is
/// not concurrency-safe).
public final class StandardErrorLogHandler: LogHandler {
    public init() {}

    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// A machine-readable logger: one JSON object per line with `level`, `time` (UTC, ISO 8601,
/// milliseconds), `message` and the given fields.
///
/// A value, passed explicitly; ``with(_:)`` adds fields carried by every line (e.g. the
/// connection id).
public struct Logger {
    public var level: LogLevel
    public let handler: any LogHandler
    private var metadata: [(String, LogValue)] = []

    public init(level: LogLevel = .info, handler: any LogHandler = StandardErrorLogHandler()) {
        self.level = level
        self.handler = handler
    }

    /// A logger adding `fields` to every line.
    public func with(_ fields: KeyValuePairs<String, LogValue>) -> Logger {
        var copy = self
        copy.metadata.append(contentsOf: fields.map { ($0.key, $0.value) })
        return copy
    }

    public func debug(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.debug, message(), fields)
    }

    public func info(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.info, message(), fields)
    }

    public func warning(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.warning, message(), fields)
    }

    public func error(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.error, message(), fields)
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, LogValue>)
    {
        guard level >= self.level else { return }
        var line = JSONWriter(capacity: 128)
        line.beginObject()
        line.field("level", level.description)
        line.field("time", Self.timestamp())
        line.field("message", message())
        for (key, value) in metadata { Self.append(key, value, to: &line) }
        for (key, value) in fields { Self.append(key, value, to: &line) }
        line.endObject()
        handler.write(line: line.text)
    }

    private static func append(_ key: String, _ value: LogValue, to line: inout JSONWriter) {
        switch value {
        case .string(let string): line.field(key, string)
        case .int(let int): line.field(key, int)
        case .bool(let bool): line.field(key, bool)
        }
    }

    private static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let milliseconds = Int32(spec.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(milliseconds, 3))Z"
    }
}
