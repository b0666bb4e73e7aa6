/// Writes one compact JSON text: objects, arrays, strings, integers, booleans and null, with the
/// commas put in for you. The one JSON writer of the package (log lines, conformance reports).
///
/// Strings are escaped as RFC 8259 requires and no more: `"` and `\` get a backslash, newline,
/// carriage return and tab their short escapes, every other control character below U+0020
/// `\u00XX`; everything else, non-ASCII included, is written as it is (UTF-8). A Swift `String`
/// holds only Unicode scalars, so the output is always valid UTF-8 (lone surrogates cannot occur).
///
/// ```swift
/// var json = JSONWriter()
/// json.beginObject()
/// json.field("level", "info")
/// json.field("bytes", 12)
/// json.endObject()
/// json.text  // {"level":"info","bytes":12}
/// ```
///
/// - Important: the writer does not check nesting: each `begin` needs its `end`, and inside an
///   object each value needs its `key` first.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var text: String
    /// True after a value, when the next key or array element needs a comma first.
    private var needsComma = false

    /// Starts an empty text, with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        text = ""
        text.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        separate()
        text += "{"
        needsComma = false
    }

    public mutating func endObject() {
        text += "}"
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        text += "["
        needsComma = false
    }

    public mutating func endArray() {
        text += "]"
        needsComma = true
    }

    /// Writes an object member's name; its value comes next.
    public mutating func key(_ name: String) {
        separate()
        Self.appendQuoted(name, to: &text)
        text += ":"
        needsComma = false
    }

    public mutating func value(_ string: String) {
        separate()
        Self.appendQuoted(string, to: &text)
        needsComma = true
    }

    public mutating func value(_ number: Int64) {
        separate()
        text += String(number)
        needsComma = true
    }

    public mutating func value(_ number: Int) { value(Int64(number)) }

    /// A finite number in its shortest exact form (`1.5`, `0.001`); NaN and infinities as null.
    public mutating func value(_ number: Double) {
        guard number.isFinite else { return nullValue() }
        if number == number.rounded(), abs(number) < 1e15 { return value(Int64(number)) }
        separate()
        text += String(number)
        needsComma = true
    }

    /// An already encoded JSON value (a number's text, a nested document), written as it is.
    /// - Important: `json` must be one valid JSON value; nothing checks it.
    public mutating func rawValue(_ json: String) {
        separate()
        text += json
        needsComma = true
    }

    public mutating func value(_ flag: Bool) {
        separate()
        text += flag ? "true" : "false"
        needsComma = true
    }

    public mutating func nullValue() {
        separate()
        text += "null"
        needsComma = true
    }

    /// An object member: ``key(_:)`` then the value.
    public mutating func field(_ name: String, _ string: String) {
        key(name)
        value(string)
    }

    public mutating func field(_ name: String, _ number: Int64) {
        key(name)
        value(number)
    }

    public mutating func field(_ name: String, _ number: Int) {
        key(name)
        value(number)
    }

    public mutating func field(_ name: String, _ flag: Bool) {
        key(name)
        value(flag)
    }

    private mutating func separate() {
        if needsComma { text += "," }
    }

    /// `string` as a JSON string literal, quotes included.
    public static func quoted(_ string: String) -> String {
        var text = ""
        appendQuoted(string, to: &text)
        return text
    }

    /// Appends `string` as a JSON string literal, quotes included.
    public static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
