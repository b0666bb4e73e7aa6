import AdLoaderCore
import AdLoaderWire
import Testing

@Suite struct StatusTests {
    static let table: [(Status.Code, Int, String)] = [
        (.ok, 0, "OK"), (.cancelled, 1, "CANCELLED"), (.unknown, 2, "UNKNOWN"),
        (.invalidArgument, 3, "INVALID_ARGUMENT"),
        (.deadlineExceeded, 4, "DEADLINE_EXCEEDED"), (.notFound, 5, "NOT_FOUND"), (.alreadyExists, 6, "ALREADY_EXISTS"),
        (.permissionDenied, 7, "PERMISSION_DENIED"), (.resourceExhausted, 8, "RESOURCE_EXHAUSTED"),
        (.failedPrecondition, 9, "FAILED_PRECONDITION"), (.aborted, 10, "ABORTED"), (.outOfRange, 11, "OUT_OF_RANGE"),
        (.unimplemented, 12, "UNIMPLEMENTED"), (.internalError, 13, "INTERNAL"), (.unavailable, 14, "UNAVAILABLE"),
        (.dataLoss, 15, "DATA_LOSS"), (.unauthenticated, 16, "UNAUTHENTICATED"),
    ]

    @Test(arguments: table)
    func rawValuesAreGRPCs(code: Status.Code, raw: Int, name: String) throws {
        #expect(code.rawValue == raw)
        #expect(Status.Code(rawValue: raw) == code)
        #expect(code.description == name)
        #expect(Status.Code.all[raw] == code)
        // Every code survives a ResponseFrame round trip.
        let frame = ResponseFrame(callID: 9, end: true, status: Status(code: code, message: "m \(raw)"))
        let decoded = try ResponseFrame(decoding: frame.encoded())
        #expect(decoded.status == frame.status)
    }

    @Test(arguments: [-1, 17, 100, Int.max])
    func outOfRangeRawValuesAreNil(raw: Int) {
        #expect(Status.Code(rawValue: raw) == nil)
    }

    @Test func descriptions() {
        #expect(
            Status(code: .invalidArgument, message: "ad_unit_id: must not be empty").description
                == "INVALID_ARGUMENT: ad_unit_id: must not be empty")
        #expect(Status.ok.description == "OK")
        #expect(Status.ok.isOK)
    }

    @Test func loaderErrorsMapToStatuses() {
        let invalid = LoaderError(code: .invalidArgument, field: "ad_unit_id", message: "must not be empty")
        #expect(invalid.status == Status(code: .invalidArgument, message: "ad_unit_id: must not be empty"))
        #expect(LoaderError(code: .notFound, message: "lease 5 is unknown").status.code == .notFound)
        #expect(LoaderError(code: .unavailable, message: "shutting down").status.code == .unavailable)
    }

    @Test func frameErrorsMapToStatuses() {
        #expect(FrameError(code: .messageTooLarge, message: "x").status.code == .resourceExhausted)
        #expect(FrameError(code: .compressedNotSupported, message: "x").status.code == .unimplemented)
        #expect(FrameError(code: .badEnvelope, message: "x").status.code == .invalidArgument)
        #expect(FrameError(code: .badMessage, message: "x").status.code == .invalidArgument)
        #expect(FrameError(code: .badPreface, message: "x").status.code == .invalidArgument)
    }
}
