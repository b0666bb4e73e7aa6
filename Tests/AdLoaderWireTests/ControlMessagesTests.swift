import AdLoaderCore
import Testing

@testable import AdLoaderWire

/// The run-time control messages: the bytes PROTOCOL.md 7.3, 7.7 and 7.8 show, and round trips.
@Suite struct ControlMessagesTests {
    @Test func theExamplesOfPROTOCOLmdAreWhatTheEncodersWrite() throws {
        // 7.3: Return lease 17, invalidate, reason "bad creative".
        let invalidate = ReturnRequestMessage(
            leaseID: 17, shown: false, invalidate: true, invalidateReason: "bad creative")
        #expect(invalidate.encoded() == [0x08, 0x11, 0x18, 0x01, 0x22, 0x0C] + Array("bad creative".utf8))
        #expect(ReturnResponseMessage(outcome: .invalidated).encoded() == [0x08, 0x05])
        // 7.7: SetLoaderEnabled loader "feed" enabled false, and its answer changed true.
        #expect(
            SetLoaderEnabledRequestMessage(loader: "feed", enabled: false).encoded() == [
                0x0A, 0x04, 0x66, 0x65, 0x65, 0x64,
            ])
        #expect(SetLoaderEnabledResponseMessage(changed: true).encoded() == [0x08, 0x01])
        // 7.8: an empty ReloadRequest; a ReloadResponse adding "b" with "a" unchanged.
        #expect(ReloadRequestMessage().encoded() == [])
        var result = ReconfigureResult()
        result.added = ["b"]
        result.unchanged = ["a"]
        #expect(ReloadResponseMessage(result: result).encoded() == [0x0A, 0x01, 0x62, 0x2A, 0x01, 0x61])
        // 7.4: a LoaderStatus "feed", disabled, source "rtb", 2 pools, 1 blocked creative, in a StatsResponse.
        let stats = StatsResponseMessage(
            pools: [],
            loaders: [LoaderState(name: "feed", enabled: false, source: "rtb", pools: 2, blockedCreatives: 1)])
        #expect(
            stats.encoded() == [
                0x1A, 0x0F, 0x0A, 0x04, 0x66, 0x65, 0x65, 0x64, 0x1A, 0x03, 0x72, 0x74, 0x62, 0x20, 0x02, 0x28, 0x01,
            ])
    }

    @Test func controlMessagesRoundTrip() throws {
        let messages: [any WireMessage] = [
            ReturnRequestMessage(leaseID: 1 << 60, shown: true, invalidate: true, invalidateReason: "été"),
            SetLoaderEnabledRequestMessage(loader: "default", enabled: true),
            SetLoaderEnabledResponseMessage(changed: false),
            ReloadResponseMessage(
                result: {
                    var r = ReconfigureResult()
                    r.added = ["x"]
                    r.removed = ["y", "z"]
                    r.changedKeepingPools = ["k"]
                    r.changedDroppingPools = ["d"]
                    return r
                }()),
        ]
        for message in messages {
            #expect(try roundTrips(message))
        }
        var event = AdEvent(kind: .loaderChanged, at: AdInstant(unixMilliseconds: 5), loader: "feed", adUnitID: "")
        event.reason = .disabled
        #expect(try roundTrips(EventMessage(event: event)))
        var removed = AdEvent(kind: .removed, at: AdInstant(unixMilliseconds: 5), loader: "feed", adUnitID: "u")
        removed.adID = "a1"
        removed.reason = .invalidated
        removed.note = "bad creative"
        #expect(try roundTrips(EventMessage(event: removed)))
        #expect(
            ReturnRequestMessage(leaseID: 3, shown: false, invalidateReason: "a\u{0}b").stringFieldWithNUL
                == "invalidate_reason")
    }

    /// A bad invalidate_reason fails the in-place decoder and protobuf-c with the same error.
    @Test func aBadReasonFailsBothDecodersAlike() throws {
        for bad in ProtoScannerTests.badStrings {
            let bytes = [0x08, 0x05, 0x18, 0x01, 0x22, UInt8(bad.count)] + bad
            bytes.withUnsafeBytes { raw in
                let reference = Result { () throws(FrameError) in try ReturnRequestMessage(protobufC: raw) }
                let scanned = Result { () throws(FrameError) in try ReturnRequestMessage(decoding: raw) }
                #expect(reference == scanned)
                if case .failure(let error) = scanned {
                    #expect(error.message.hasPrefix("invalidate_reason:"))
                } else {
                    Issue.record("accepted \(bad)")
                }
            }
        }
    }

    private func roundTrips<M: WireMessage>(_ message: M) throws -> Bool {
        try M(decoding: message.encoded()) == message
    }
}
