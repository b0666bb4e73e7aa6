import AdLoaderWire

extension HTTP2SessionFuzz {
    /// One HTTP/2 frame.
    static func frame(type: UInt8, flags: UInt8 = 0, streamID: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags]
            + [
                UInt8(streamID >> 24 & 0x7f), UInt8(streamID >> 16 & 0xff), UInt8(streamID >> 8 & 0xff),
                UInt8(streamID & 0xff),
            ]
            + payload
    }

    /// An HPACK header block of literals without indexing, new names (RFC 7541 6.2.2).
    static func headerBlock(_ headers: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in headers {
            block.append(0)
            block.append(UInt8(name.utf8.count))
            block += name.utf8
            block.append(UInt8(value.utf8.count))
            block += value.utf8
        }
        return block
    }

    static func grpcHeaders(_ path: String, extra: [(String, String)] = []) -> [(String, String)] {
        [
            (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "fuzz"),
            ("content-type", "application/grpc"), ("te", "trailers"),
        ] + extra
    }

    /// A client's SETTINGS, then one gRPC request (HEADERS, DATA with END_STREAM) on `streamID`.
    static func seedRequest(
        path: String, message: [UInt8], streamID: UInt32, extra: [(String, String)] = [], settings: Bool = true
    ) -> [UInt8] {
        var body: [UInt8] = []
        FrameEncoder.appendPrefix(length: message.count, to: &body)
        body += message
        return (settings ? frame(type: 4, streamID: 0) : [])
            + frame(type: 1, flags: 0x4, streamID: streamID, headerBlock(grpcHeaders(path, extra: extra)))
            + frame(type: 0, flags: 0x1, streamID: streamID, body)
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let borrow = BorrowRequestMessage(adUnitID: "feed", loader: "", slot: "cell-1", waitMilliseconds: 500).encoded()
        let watch = WatchRequestMessage(loader: "", adUnitID: "", kinds: []).encoded()
        let health = [0x0a, 0x1a] + Array("adloader.v1.NativeAdLoader".utf8)
        let listServices: [UInt8] = [0x3a, 0x01, 0x2a]
        let ping = frame(type: 6, streamID: 0, [1, 2, 3, 4, 5, 6, 7, 8])
        let windowUpdate = frame(type: 8, streamID: 0, [0, 1, 0, 0])
        return [
            ("borrow", [0] + seedRequest(path: MethodName.borrow, message: borrow, streamID: 1)),
            ("borrow-chunked", [3, 1, 7, 30] + seedRequest(path: MethodName.borrow, message: borrow, streamID: 1)),
            (
                "borrow-timeout",
                [0]
                    + seedRequest(
                        path: MethodName.borrow, message: borrow, streamID: 1, extra: [("grpc-timeout", "20m")])
            ),
            (
                "watch-then-reset",
                [0] + seedRequest(path: MethodName.watch, message: watch, streamID: 1)
                    + frame(type: 3, streamID: 1, [0, 0, 0, 8])
            ),
            ("health-check", [0] + seedRequest(path: "/grpc.health.v1.Health/Check", message: health, streamID: 1)),
            (
                "reflection-list",
                [0]
                    + seedRequest(
                        path: "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", message: listServices,
                        streamID: 1)
            ),
            (
                "two-streams-ping",
                [0] + seedRequest(path: MethodName.stats, message: [], streamID: 1) + ping + windowUpdate
                    + seedRequest(path: MethodName.prefetch, message: [0x0a, 0x01, 0x61], streamID: 3, settings: false)
            ),
            (
                "bad-encoding",
                [0]
                    + seedRequest(
                        path: MethodName.borrow, message: borrow, streamID: 1, extra: [("grpc-encoding", "gzip")])
            ),
        ]
    }
}
