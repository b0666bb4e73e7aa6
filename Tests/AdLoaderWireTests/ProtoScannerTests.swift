import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// The in-place decoders must accept exactly what protobuf-c accepts, with the same values:
/// compared here on valid frames, mutated frames and generated field soups that give every
/// field every wire type, overlong and unterminated varints and bad lengths.
@Suite struct ProtoScannerTests {
    /// Compares the hand decoder of RequestFrame with protobuf-c's on `bytes`.
    ///
    /// Where the full decoder refuses a string (`.badMessage`), the header still decodes
    /// (the server reads no metadata) and a bad `method` becomes a printable name that is
    /// no method (UNIMPLEMENTED at the server).
    static func sameEnvelope(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            let header = try? RequestFrame.decodeHeader(raw)
            let reference: RequestFrame
            do throws(FrameError) {
                reference = try RequestFrame(decoding: raw)
            } catch {
                guard error.code == .badMessage else { return error.code == .badEnvelope && header == nil }
                guard let header else { return false }
                if error.message == "method: must be valid UTF-8 without NUL bytes" {
                    return !MethodName.all.contains(header.method) && header.method.contains("\\")
                }
                return error.message == "metadata.key: must be valid UTF-8 without NUL bytes"
                    || error.message == "metadata.value: must be valid UTF-8 without NUL bytes"
            }
            guard let header else { return false }
            let message = Array(UnsafeRawBufferPointer(rebasing: raw[header.messageRange]))
            return header.callID == reference.callID && header.method == reference.method
                && header.timeoutMilliseconds == reference.timeoutMilliseconds && header.cancel == reference.cancel
                && message == reference.message
                && Self.sameMetadata(RequestFrame.decodeMetadata(header, in: raw), reference.metadata)
        }
    }

    /// The in-place metadata against protobuf-c's entries: the same entries without
    /// `authorization` (unless past a bound), the last `authorization` value.
    static func sameMetadata(_ metadata: RequestFrame.Metadata?, _ reference: [MetadataEntry]) -> Bool {
        guard let metadata else { return reference.isEmpty }
        return (metadata.error != nil || metadata.entries.entries == reference.filter { $0.key != "authorization" })
            && metadata.authorization == reference.last { $0.key == "authorization" }?.value
    }

    /// Same value, or the same error (message included: "ad_unit_id: must be valid UTF-8
    /// without NUL bytes" must come from both).
    static func sameBorrow(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            let reference = Result { () throws(FrameError) in try BorrowRequestMessage(protobufC: raw) }
            let fast = Result { () throws(FrameError) in try BorrowRequestMessage(decoding: raw) }
            return reference == fast
        }
    }

    static func sameReturn(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            let reference = try? ReturnRequestMessage(protobufC: raw)
            let fast = try? ReturnRequestMessage(decoding: raw)
            return reference == fast
        }
    }

    static var validFrames: [[UInt8]] {
        var frames: [[UInt8]] = []
        for text in Fixtures.strings {
            let borrow = BorrowRequestMessage(adUnitID: text, loader: text, slot: text, waitMilliseconds: 500)
            frames.append(
                RequestFrame(
                    callID: 7, method: MethodName.borrow, request: borrow, timeoutMilliseconds: 2_000,
                    metadata: [MetadataEntry(key: "k", value: text)]
                ).encoded())
            frames.append(borrow.encoded())
        }
        for method in MethodName.all + ["", "/x.Y/Z", "/adloader.v1.NativeAdLoader/Borrow\u{0}tail", "é"] {
            frames.append(RequestFrame(callID: .max, method: method, message: [1, 2, 3]).encoded())
        }
        frames.append(RequestFrame.cancel(callID: 4).encoded())
        frames += badStringFrames
        frames.append(ReturnRequestMessage(leaseID: 99, shown: true).encoded())
        frames.append(ReturnRequestMessage(leaseID: .max, shown: false).encoded())
        for text in Fixtures.strings {
            frames.append(
                ReturnRequestMessage(leaseID: 5, shown: true, invalidate: true, invalidateReason: text).encoded())
        }
        // ReturnRequest.invalidate_reason (field 4) holding a bad string, alone and after a good one.
        for bad in badStrings {
            frames.append([0x08, 0x05, 0x18, 0x01] + stringField(4, bad))
            frames.append(stringField(4, Array("ok".utf8)) + stringField(4, bad) + [0x08, 0x05])
            // device_ip (5) and device_user_agent (6) likewise.
            frames.append([0x08, 0x05, 0x10, 0x01] + stringField(5, bad))
            frames.append(stringField(6, Array("Mozilla/5.0".utf8)) + stringField(6, bad) + [0x08, 0x05])
        }
        for text in Fixtures.strings {
            frames.append(
                ReturnRequestMessage(leaseID: 6, shown: true, deviceIP: text, deviceUserAgent: text).encoded())
        }
        return frames
    }

    /// String bytes that are not a valid protocol string: a NUL (alone, inside, at the end),
    /// stray continuation and invalid lead bytes, overlong forms, a surrogate, a code point
    /// above U+10FFFF, sequences cut short.
    static let badStrings: [[UInt8]] = [
        Array("unit\0evil".utf8), [0x00], Array("unit".utf8) + [0], [0xFF, 0xFE], [0x80], [0xC0, 0x80], [0xC1, 0xBF],
        [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0x61, 0xE2, 0x82], [0xF0, 0x9F, 0x98], Array("é".utf8) + [0xC3],
    ]

    /// `bytes` as a length-prefixed field `number`.
    static func stringField(_ number: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        appendVarint(number << 3 | 2, to: &out)
        appendVarint(UInt64(bytes.count), to: &out)
        return out + bytes
    }

    /// Every bad string in every string field of BorrowRequest and RequestFrame (metadata
    /// key and value included), alone and between valid fields.
    static var badStringFrames: [[UInt8]] {
        var frames: [[UInt8]] = []
        let good = stringField(1, Array("feed".utf8))
        for bad in badStrings {
            for number in [1, 2, 3] as [UInt64] {
                let field = stringField(number, bad)
                frames += [field, good + field + [0x20, 0x05], field + good, field + stringField(2, [0xFF])]
            }
            let borrow = BorrowRequestMessage(adUnitID: "u").encoded()
            frames.append([0x08, 0x07] + stringField(2, bad) + stringField(5, borrow))
            frames.append([0x08, 0x07] + stringField(2, Array(MethodName.borrow.utf8) + bad) + stringField(5, borrow))
            for entry in [stringField(1, bad), stringField(2, bad), stringField(1, [0x6B]) + stringField(2, bad)] {
                frames.append([0x08, 0x07] + stringField(2, Array(MethodName.borrow.utf8)) + stringField(4, entry))
            }
        }
        return frames
    }

    @Test func validInputsDecodeTheSame() {
        for frame in Self.validFrames {
            #expect(Self.sameEnvelope(frame), "\(frame)")
            #expect(Self.sameBorrow(frame), "\(frame)")
            #expect(Self.sameReturn(frame), "\(frame)")
        }
    }

    /// Every field number with every wire type and values at the edges of protobuf-c's
    /// readers: overlong zeros, a 5th varint byte above 32 bits, 10- and 11-byte varints,
    /// all-zero length-prefixed data, fixed values of zeros and ones.
    @Test func everyFieldWithEveryWireTypeDecodesTheSame() {
        let varints: [[UInt8]] = [
            [0x00], [0x01], [0x80, 0x00], [0x80, 0x80, 0x80, 0x80, 0x10], [0x80, 0x80, 0x80, 0x80, 0x70],
            [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], [0x80],
        ]
        let fixed64: [[UInt8]] = [
            [UInt8](repeating: 0, count: 8), [UInt8](repeating: 0x80, count: 8), [1, 0, 0, 0, 0, 0, 0, 0],
        ]
        let fixed32: [[UInt8]] = [[0, 0, 0, 0], [0x80, 0x80, 0x80, 0x80], [0, 0, 0, 2]]
        let delimited: [[UInt8]] = [
            [0x00], [0x01, 0x00], [0x02, 0x00, 0x00], [0x80, 0x00], [0x81, 0x00, 0x00], [0x03, 0x61, 0x00, 0x62],
            [0x01, 0x80], [0x02, 0x0A, 0x00], [0x04, 0x0A, 0x01, 0x61, 0x12], [0x05, 0x0A, 0x01, 0x61, 0x18, 0x01],
        ]
        var checked = 0
        for number in [0, 1, 2, 3, 4, 5, 6, 7, 16] as [UInt64] {
            for (wire, values) in [
                (UInt64(0), varints), (1, fixed64), (2, delimited), (5, fixed32), (3, [[]]), (4, [[]]),
            ] {
                for value in values {
                    var bytes: [UInt8] = []
                    appendVarint(number << 3 | wire, to: &bytes)
                    bytes += value
                    for input in [bytes, bytes + bytes, [0x08, 0x05] + bytes, bytes + [0x10, 0x01]] {
                        #expect(Self.sameEnvelope(input), "envelope \(input)")
                        #expect(Self.sameBorrow(input), "borrow \(input)")
                        #expect(Self.sameReturn(input), "return \(input)")
                        checked += 1
                    }
                }
            }
        }
        // Keys: overlong, 5 bytes, field bits above 32, unterminated.
        for key in [
            [0x88, 0x00], [0x80, 0x01], [0x88, 0x80, 0x80, 0x80, 0x00], [0x88, 0x80, 0x80, 0x80, 0x10],
            [0x88, 0x80, 0x80, 0x80, 0x80, 0x00], [0x8A, 0x80], [0x00], [0x07, 0x01], [0xF8, 0xFF, 0xFF, 0xFF, 0x0F],
        ] as [[UInt8]] {
            for tail in [[0x05], [0x01, 0x61], [0x80, 0x01]] as [[UInt8]] {
                let input = key + tail
                #expect(Self.sameEnvelope(input) && Self.sameBorrow(input) && Self.sameReturn(input), "\(input)")
            }
        }
        #expect(checked > 500)
    }

    /// Every truncation and every single-byte change of valid frames.
    @Test func mutatedFramesDecodeTheSame() {
        var generator = SeededGenerator(seed: 11)
        for frame in Self.validFrames where frame.count < 200 {
            for cut in 0...frame.count {
                let prefix = Array(frame[..<cut])
                #expect(Self.sameEnvelope(prefix) && Self.sameBorrow(prefix) && Self.sameReturn(prefix), "\(prefix)")
            }
            for index in frame.indices {
                for _ in 0..<2 {
                    var mutated = frame
                    mutated[index] = UInt8.random(in: 0...255, using: &generator)
                    #expect(
                        Self.sameEnvelope(mutated) && Self.sameBorrow(mutated) && Self.sameReturn(mutated), "\(mutated)"
                    )
                }
            }
        }
    }

    /// Random sequences of fields: numbers 0...8 and a few far ones, every wire type 0...7,
    /// varints of 1...11 bytes (overlong, unterminated), lengths right, short or huge,
    /// nested metadata entries.
    @Test(arguments: 0..<10)
    func generatedFieldSoupsDecodeTheSame(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed) &+ 1_000)
        for _ in 0..<400 {
            let bytes = Self.soup(depth: 0, using: &generator)
            #expect(Self.sameEnvelope(bytes), "\(bytes)")
            #expect(Self.sameBorrow(bytes), "\(bytes)")
            #expect(Self.sameReturn(bytes), "\(bytes)")
        }
    }

    @Test(arguments: 0..<5)
    func randomBytesDecodeTheSame(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed) &+ 77)
        for _ in 0..<500 {
            let bytes = [UInt8].random(count: Int.random(in: 0...24, using: &generator), using: &generator)
            #expect(Self.sameEnvelope(bytes) && Self.sameBorrow(bytes) && Self.sameReturn(bytes), "\(bytes)")
        }
    }

    static func soup(depth: Int, using g: inout SeededGenerator) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int.random(in: 0...5, using: &g) {
            let numbers: [UInt64] = [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 1000, 1 << 28, 1 << 29 + 1, UInt64(UInt32.max) + 2,
            ]
            let number = numbers.randomElement(using: &g)!
            let wire = UInt64(
                Int.random(in: 0...10, using: &g) < 8
                    ? [0, 2, 2, 0, 1, 5, 2, 0][Int.random(in: 0...7, using: &g)] : UInt64.random(in: 0...7, using: &g))
            var key: [UInt8] = []
            appendVarint(number << 3 | wire, to: &key)
            if Int.random(in: 0..<12, using: &g) == 0 { key = [UInt8.random(in: 0...255, using: &g)] }
            if Int.random(in: 0..<12, using: &g) == 0 {
                key.append(contentsOf: [0x80, 0x80, 0x80, 0x80, 0x80, 0x01].prefix(Int.random(in: 1...6, using: &g)))
            }
            out += key
            switch wire {
            case 0:
                out += varintBytes(using: &g)
            case 1:
                out += [UInt8].random(count: Int.random(in: 6...8, using: &g), using: &g)
            case 5:
                out += [UInt8].random(count: Int.random(in: 2...4, using: &g), using: &g)
            case 2:
                var body: [UInt8]
                switch Int.random(in: 0...4, using: &g) {
                case 0 where depth < 2: body = soup(depth: depth + 1, using: &g)  // a nested message
                case 1: body = Array("/adloader.v1.NativeAdLoader/Borrow".utf8)
                case 2: body = [0x61, 0x00, 0x62]
                default: body = [UInt8].random(count: Int.random(in: 0...6, using: &g), using: &g)
                }
                var length = UInt64(body.count)
                switch Int.random(in: 0...9, using: &g) {
                case 0: length += UInt64.random(in: 1...3, using: &g)
                case 1: length = UInt64.random(in: 0...UInt64(UInt32.max), using: &g)
                default: break
                }
                if Int.random(in: 0...9, using: &g) == 0 {
                    out += [0x80 | UInt8(length & 0x7F), 0x80, 0x80, 0x80, 0x80, 0x00].prefix(
                        Int.random(in: 2...6, using: &g))
                } else {
                    appendVarint(length, to: &out)
                }
                out += body
            default:
                out += [UInt8].random(count: Int.random(in: 0...3, using: &g), using: &g)
            }
        }
        return out
    }

    static func varintBytes(using g: inout SeededGenerator) -> [UInt8] {
        let length = Int.random(in: 1...11, using: &g)
        var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &g) | 0x80 }
        if Int.random(in: 0...7, using: &g) != 0 { bytes[length - 1] &= 0x7F }  // usually terminated
        if Int.random(in: 0...3, using: &g) == 0 { bytes = bytes.map { $0 & 0x80 } }  // zeros, overlong
        return bytes
    }
}
