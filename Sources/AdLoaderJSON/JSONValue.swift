/// A parsed JSON document: the configuration file and OpenRTB bodies (kept off Foundation so
/// that numbers, booleans and key order stay exactly as written).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double, text: String)
    case string(String)
    case array([JSONValue])
    /// Keys in file order; duplicates are rejected by the parser.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a, _), .number(let b, _)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.map(\.key) == b.map(\.key) && a.map(\.value) == b.map(\.value)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let value, _): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value):
            for (key, item) in value {
                hasher.combine(key)
                hasher.combine(item)
            }
        }
    }

    /// A short name of the value's kind, for error messages.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Where and why a document did not parse.
    public struct ParseError: Error, Hashable, Sendable {
        /// Byte offset of the problem.
        public var offset: Int
        /// Line of the problem, from 1 (0 when not known).
        public var line: Int
        /// Column of the problem on its line, in characters from 1 (0 when not known).
        public var column: Int
        public var message: String

        public init(offset: Int, message: String, line: Int = 0, column: Int = 0) {
            self.offset = offset
            self.line = line
            self.column = column
            self.message = message
        }

        /// `line L, column C` when known, else `byte N`: where an editor finds the problem.
        public var position: String { line > 0 ? "line \(line), column \(column)" : "byte \(offset)" }

        /// The line and column (a column counts characters: UTF-8 continuation bytes and the
        /// `\r` of a CRLF line end do not add one) of byte `offset` in `bytes`.
        static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
            var line = 1
            var column = 1
            for byte in bytes[0..<min(offset, bytes.count)] {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80, byte != 0x0D {
                    column += 1
                }
            }
            return (line, column)
        }
    }

    /// Parses a whole document.
    /// - Throws: ``ParseError`` with the byte offset of the problem.
    public static func parse(_ text: String) throws(ParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses a whole document from UTF-8 bytes (invalid UTF-8 in strings is repaired, not refused).
    /// - Throws: ``ParseError`` with the byte offset of the problem.
    public static func parse(bytes: [UInt8]) throws(ParseError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        do throws(ParseError) {
            parser.skipSpace()
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.index == parser.bytes.count else { throw parser.fail("unexpected text after the document") }
            return value
        } catch {
            var located = error
            (located.line, located.column) = ParseError.lineAndColumn(of: error.offset, in: bytes)
            throw located
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func fail(_ message: String) -> ParseError { ParseError(offset: index, message: message) }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String) throws(ParseError) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw fail("expected \(literal)") }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < 64 else { throw fail("nested too deeply") }
            guard index < bytes.count else { throw fail("unexpected end of document") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default: return try number()
            }
        }

        /// Objects with up to this many keys are checked for duplicates by a scan.
        static let scannedKeys = 16

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            // The keys seen, once an object has more than a few: a linear scan below that (no
            // allocation for the small objects of a bid response), a set from there on, so a
            // large object costs linear time rather than quadratic.
            var seen: Set<String> = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                if members.count < Self.scannedKeys {
                    if members.contains(where: { $0.key == key }) { throw fail("duplicate key \"\(key)\"") }
                } else {
                    if seen.isEmpty { seen = Set(members.map(\.key)) }
                    if !seen.insert(key).inserted { throw fail("duplicate key \"\(key)\"") }
                }
                skipSpace()
                try expect(":")
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end of document") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                } else {
                    throw fail("expected , or }")
                }
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            var items: [JSONValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end of document") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                } else {
                    throw fail("expected , or ]")
                }
            }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush(&run, into: &scalars)
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush(&run, into: &scalars)
                    guard index < bytes.count else { break }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code) {
                            try expect("\\u")
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail("bad \\u escape") }
                        scalars.append(scalar)
                    default: throw fail("bad escape")
                    }
                default:
                    guard byte >= 0x20 else { throw fail("control character in string") }
                    run.append(byte)
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count,
                let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
            else { throw fail("bad \\u escape") }
            index += 4
            return code
        }

        mutating func number() throws(ParseError) -> JSONValue {
            let start = index
            while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard !text.isEmpty, let value = Double(text) else {
                index = start
                throw fail("unexpected character")
            }
            return .number(value, text: text)
        }
    }
}
