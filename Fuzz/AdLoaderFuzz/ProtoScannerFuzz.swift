import AdLoaderWire

/// Fuzzes the in-place decoders of the hot path (`ProtoScanner`: BorrowRequest and
/// ReturnRequest) differentially against protobuf-c: on every input both must give the same
/// value or the same error, message included (the tests in ProtoScannerTests.swift compare
/// them the same way on generated inputs). Also compares the string check they share with
/// the standard library's UTF-8 validation.
public enum ProtoScannerFuzz: FuzzTarget {
    public static let name = "proto-scanner"

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        try compareBorrow(input)
        try compareReturn(input)
        try compareStringCheck(input)
    }

    static func compareBorrow(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let reference = Result { () throws(FrameError) in try BorrowRequestMessage(protobufC: bytes) }
        let scanned = Result { () throws(FrameError) in try BorrowRequestMessage(decoding: bytes) }
        try require(reference == scanned, "BorrowRequest \(hex(bytes)): in place \(scanned), protobuf-c \(reference)")
        if case .success(let message) = scanned { try EnvelopeFuzz.roundTrip(message) }
    }

    static func compareReturn(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let reference = Result { () throws(FrameError) in try ReturnRequestMessage(protobufC: bytes) }
        let scanned = Result { () throws(FrameError) in try ReturnRequestMessage(decoding: bytes) }
        try require(reference == scanned, "ReturnRequest \(hex(bytes)): in place \(scanned), protobuf-c \(reference)")
        if case .success(let message) = scanned { try EnvelopeFuzz.roundTrip(message) }
    }

    /// The protocol's string rule (UTF-8 without NUL) against `String(validating:)`.
    static func compareStringCheck(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let reference = bytes.contains(0) ? nil : String(validating: bytes, as: UTF8.self)
        let checked = validString(bytes)
        try require(
            checked == reference,
            "validString \(hex(bytes)) gave \(String(describing: checked)), expected \(String(describing: reference))")
        try require(
            isValidStringField(bytes) == (reference != nil),
            "isValidStringField \(hex(bytes)) is \(isValidStringField(bytes)), expected \(reference != nil)")
    }
}
