import Testing

@testable import AdLoaderWire

/// A call's metadata: order kept, bounds refused with a clear status, and the framed
/// envelope's entries reaching it (without `authorization`, which is the admission step's).
@Suite struct CallMetadataTests {
    @Test func keepsOrderAndAnswersTheLastValueOfAKey() throws {
        let metadata = try CallMetadata([("x-a", "1"), ("x-b", "2"), ("x-a", "3")])
        #expect(metadata.map(\.key) == ["x-a", "x-b", "x-a"])
        #expect(metadata.value(for: "x-a") == "3")
        #expect(metadata.values(for: "x-a") == ["1", "3"])
        #expect(metadata.value(for: "x-c") == nil)
        #expect(metadata.byteCount == 3 * 4)
        #expect(CallMetadata().isEmpty)
        // A value type: appending to a copy leaves the original as it was (copy on write).
        var copy = metadata
        try copy.append(key: "x-d", value: "4")
        #expect(metadata.count == 3 && copy.count == 4 && copy.value(for: "x-d") == "4")
        #expect(metadata.value(for: "x-d") == nil && metadata != copy)
        try copy.append(key: "x-e", value: "5")
        #expect(copy.count == 5 && copy.byteCount == 5 * 4)
    }

    @Test func refusesAnEntryPastEitherBoundAndStaysAsItWas() throws {
        var many = CallMetadata()
        for index in 0..<CallMetadata.maximumEntries { try many.append(key: "k\(index)", value: "") }
        #expect(throws: MetadataError.self) { try many.append(key: "one-more", value: "") }
        #expect(many.count == CallMetadata.maximumEntries)
        var large = CallMetadata()
        try large.append(key: "x", value: String(repeating: "v", count: CallMetadata.maximumByteCount - 1))
        do {
            try large.append(key: "y", value: "")
            Issue.record("the byte bound did not bind")
        } catch {
            #expect(error.status.code == .resourceExhausted)
            #expect(error.message.contains("8192 bytes"))
        }
        #expect(large.count == 1 && large.byteCount == CallMetadata.maximumByteCount)
        // Extremes: an empty key and an empty value are entries like any other.
        var empty = CallMetadata()
        try empty.append(key: "", value: "")
        #expect(empty.count == 1)
    }

    @Test(arguments: [
        (":path", true), (":authority", true), ("grpc-timeout", true), ("grpc-anything", true), ("te", true),
        ("user-agent", true), ("content-type", true), ("content-length", true), ("authorization", true), ("", true),
        ("x-request-id", false), ("x-adloader-affinity", false), ("tea", false), ("grpc", false),
    ])
    func transportKeysAreNotTheCalls(key: String, isTransport: Bool) {
        #expect(CallMetadata.isTransportKey(key) == isTransport)
    }

    @Test func theFramedEnvelopesEntriesReachTheHeaderWithoutAuthorization() throws {
        let frame = RequestFrame(
            callID: 7, method: MethodName.stats, request: StatsRequestMessage(),
            metadata: [
                MetadataEntry(key: "x-request-id", value: "r-1"),
                MetadataEntry(key: "authorization", value: "Bearer t"),
                MetadataEntry(key: "x-adloader-affinity", value: "feed-9"),
            ])
        let metadata = try frame.encoded().withUnsafeBytes {
            RequestFrame.decodeMetadata(try RequestFrame.decodeHeader($0), in: $0)
        }
        #expect(metadata?.authorization == "Bearer t")
        #expect(metadata?.entries.entries.map(\.key) == ["x-request-id", "x-adloader-affinity"])
        #expect(metadata?.entries.value(for: "x-request-id") == "r-1")
        #expect(metadata != nil && metadata?.error == nil)
        let none = try RequestFrame(callID: 8, method: MethodName.stats, request: StatsRequestMessage()).encoded()
            .withUnsafeBytes { try RequestFrame.decodeHeader($0) }
        #expect(!none.hasMetadata)
        // Entries around other fields: only the entries are read.
        let split =
            RequestFrame(callID: 3, metadata: [MetadataEntry(key: "a", value: "1")]).encoded()
            + RequestFrame(callID: 4, method: MethodName.borrow).encoded()
            + RequestFrame(callID: 0, metadata: [MetadataEntry(key: "b", value: "2")]).encoded()
        let (header, both) = try split.withUnsafeBytes { raw in
            let header = try RequestFrame.decodeHeader(raw)
            return (header, RequestFrame.decodeMetadata(header, in: raw))
        }
        #expect(header.callID == 4 && header.method == MethodName.borrow)
        #expect(both?.entries.entries == [MetadataEntry(key: "a", value: "1"), MetadataEntry(key: "b", value: "2")])
    }

    @Test func anEnvelopeWithTooMuchMetadataStillDecodesAndSaysSo() throws {
        let entries = (0...CallMetadata.maximumEntries).map { MetadataEntry(key: "k\($0)", value: "v") }
        let frame = RequestFrame(
            callID: 9, method: MethodName.borrow, request: StatsRequestMessage(), metadata: entries)
        let (header, metadata) = try frame.encoded().withUnsafeBytes { raw in
            let header = try RequestFrame.decodeHeader(raw)
            return (header, RequestFrame.decodeMetadata(header, in: raw))
        }
        #expect(header.callID == 9 && header.method == MethodName.borrow)
        #expect(metadata?.entries.count == CallMetadata.maximumEntries)
        #expect(metadata?.error?.status.code == .resourceExhausted)
        #expect(metadata?.error?.message == "metadata: more than 64 entries")
    }
}
