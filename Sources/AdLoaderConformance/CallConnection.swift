package import AdLoaderWire

/// What the transport-neutral checks need of a connection: make a call, get its messages and
/// final status. ``RawConnection`` (framed) and ``GRPCCallConnection`` (gRPC) both provide it,
/// so those checks run the same cases over both transports.
package protocol CallConnection: AnyObject {
    /// A call of `method` with one encoded request message, waited for to its end.
    func call(
        _ method: String, _ message: [UInt8], timeoutMilliseconds: UInt32, metadata: [MetadataEntry]
    ) throws(CheckFailure) -> CallResult
    func close()
}

extension CallConnection {
    /// A call with one encoded request message, no deadline, no metadata.
    package func call(_ method: String, _ message: [UInt8]) throws(CheckFailure) -> CallResult {
        try call(method, message, timeoutMilliseconds: 0, metadata: [])
    }

    /// A call of `request`, whatever its status.
    package func call(
        _ method: String, _ request: some WireMessage, timeoutMilliseconds: UInt32 = 0,
        metadata: [MetadataEntry] = []
    ) throws(CheckFailure) -> CallResult {
        try call(method, request.encoded(), timeoutMilliseconds: timeoutMilliseconds, metadata: metadata)
    }

    /// A call expected to succeed, its one answer decoded as `Response`.
    package func call<Response: WireMessage>(
        _ method: String, _ request: some WireMessage, as: Response.Type, timeoutMilliseconds: UInt32 = 0
    ) throws(CheckFailure) -> Response {
        let result = try call(method, request, timeoutMilliseconds: timeoutMilliseconds)
        guard result.status.isOK else { throw CheckFailure("\(method) answered \(result.status)") }
        guard result.messages.count == 1 else {
            throw CheckFailure("\(method) answered OK with \(result.messages.count) messages")
        }
        do {
            return try Response(decoding: result.messages[0])
        } catch {
            throw CheckFailure("\(method) answered a message that does not decode: \(error)")
        }
    }
}

extension RawConnection: CallConnection {}
