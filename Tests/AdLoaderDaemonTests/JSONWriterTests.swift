import AdLoaderJSON
import AdLoaderLogging
import Testing

@testable import AdLoaderDaemon

@Suite struct JSONWriterTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("", #""""#),
        ("say \"hi\"", #""say \"hi\"""#),
        (#"C:\dir\"#, #""C:\\dir\\""#),
        ("a\nb\rc\td", #""a\nb\rc\td""#),
        ("\u{0}\u{1}\u{8}\u{C}\u{1B}\u{1F}", #""\u0000\u0001\u0008\u000c\u001b\u001f""#),
        ("\u{20}\u{7F}", "\"\u{20}\u{7F}\""),
        ("/ stays /", #""/ stays /""#),
        ("é ü ß 漢字 🎉", "\"é ü ß 漢字 🎉\""),
        ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
    ])
    func escapesWhatJSONRequiresAndNothingElse(string: String, expected: String) {
        #expect(JSONWriter.quoted(string) == expected)
    }

    @Test func bytesThatAreNotUTF8BecomeReplacementCharactersBeforeTheWriterSeesThem() {
        // A lone surrogate (ED A0 80) and a stray continuation byte cannot live in a String.
        let string = String(decoding: [0x61, 0xED, 0xA0, 0x80, 0x80, 0x62], as: UTF8.self)
        let quoted = JSONWriter.quoted(string)
        #expect(quoted.hasPrefix("\"a") && quoted.hasSuffix("b\""))
        #expect(quoted.unicodeScalars.allSatisfy { $0.value < 0xD800 || $0.value > 0xDFFF })
        #expect(quoted.contains("\u{FFFD}"))
    }

    /// Every scalar below U+0100 and a few beyond, alone and together: the daemon's own JSON
    /// parser reads back exactly the string that was written.
    @Test func everyEscapedStringParsesBackToItself() throws {
        var strings = (0..<0x100).map { String(Unicode.Scalar(UInt8($0))) }
        strings += ["\u{FFFD}", "\u{10FFFF}", "\u{1F600}", "\u{FEFF}", String(strings.joined().reversed())]
        for string in strings {
            #expect(
                try JSONValue.parse(JSONWriter.quoted(string)) == .string(string),
                "\(string.unicodeScalars.map(\.value))")
        }
    }

    @Test func writesCommasBetweenMembersAndElementsOnly() throws {
        var json = JSONWriter()
        json.beginObject()
        json.field("a", 1)
        json.key("list")
        json.beginArray()
        json.value("x")
        json.beginObject()
        json.endObject()
        json.beginArray()
        json.endArray()
        json.nullValue()
        json.value(true)
        json.value(Int64.min)
        json.endArray()
        json.field("b", false)
        json.key("nested")
        json.beginObject()
        json.field("c", "d")
        json.endObject()
        json.endObject()
        #expect(json.text == #"{"a":1,"list":["x",{},[],null,true,-9223372036854775808],"b":false,"nested":{"c":"d"}}"#)
        #expect(throws: Never.self) { try JSONValue.parse(json.text) }
    }

    @Test func keysAreEscapedLikeValues() {
        var json = JSONWriter()
        json.beginObject()
        json.field("a\"b\n", "v")
        json.endObject()
        #expect(json.text == #"{"a\"b\n":"v"}"#)
    }
}

/// The parser's duplicate-key check: a scan for small objects, a set for large ones.
@Suite struct JSONDuplicateKeyTests {
    private func object(_ keys: [String]) -> [UInt8] {
        Array(("{" + keys.map { #""\#($0)":1"# }.joined(separator: ",") + "}").utf8)
    }

    private func refusesDuplicate(_ bytes: [UInt8], key: String) -> Bool {
        do {
            _ = try JSONValue.parse(bytes: bytes)
            return false
        } catch {
            return error.message == "duplicate key \"\(key)\""
        }
    }

    @Test func aTenThousandKeyObjectParsesInOrder() throws {
        let keys = (0..<10_000).map { "k\($0)" }
        let value = try JSONValue.parse(bytes: object(keys))
        let members = try #require(value.members)
        #expect(members.count == 10_000 && members.map(\.key) == keys)
        #expect(value["k9999"]?.integer == 1)
    }

    @Test func aDuplicateKeyIsRefusedWhereverItIs() {
        let keys = (0..<10_000).map { "k\($0)" }
        #expect(refusesDuplicate(object(keys + ["k0"]), key: "k0"))
        #expect(refusesDuplicate(object(keys + ["k9999"]), key: "k9999"))
        #expect(refusesDuplicate(object(["a", "b", "a"]), key: "a"))
        // Around the switch from the scan to the set: each position, duplicating the first and
        // the last key before it.
        for count in 1...40 {
            let keys = (0..<count).map { "k\($0)" }
            #expect(refusesDuplicate(object(keys + ["k0"]), key: "k0"), "\(count) keys")
            #expect(refusesDuplicate(object(keys + ["k\(count - 1)"]), key: "k\(count - 1)"), "\(count) keys")
            #expect((try? JSONValue.parse(bytes: object(keys + ["new"])))?.members?.count == count + 1)
        }
    }
}
