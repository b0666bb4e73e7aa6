import AdLoaderCore
import AdLoaderService
import AdLoaderWire

/// One request frame, decoded where its bytes are: the envelope's header, its metadata entries
/// (nil when it has none, as nearly every call) and the request (decoded by the service's
/// method table). A request that does not decode is kept as the status it is answered with,
/// reported where dispatch reaches it.
struct IncomingCall {
    var header: RequestFrame.Header
    var metadata: RequestFrame.Metadata?
    var request: ServiceRequest?
    var requestError: Status?

    /// Decodes `envelope` into `call`.
    /// - Throws: ``FrameError`` `.badEnvelope` when `envelope` is not a RequestFrame.
    @inline(__always)
    static func decode(_ envelope: UnsafeRawBufferPointer, into call: inout IncomingCall?) throws(FrameError) {
        // Stored straight into the caller's variable: a throwing init returned the value
        // through a temporary that was copied and destroyed through the value witnesses.
        let header = try RequestFrame.decodeHeader(envelope)
        if header.cancel {
            call = IncomingCall(header: consume header, metadata: nil, request: nil, requestError: nil)
            return
        }
        let metadata = header.hasMetadata ? RequestFrame.decodeMetadata(header, in: envelope) : nil
        // `consume`: the header moves into the call rather than being copied (a retain and a
        // release of its method per call).
        do throws(Status) {
            let request = try ServiceRequest(
                method: header.method, message: UnsafeRawBufferPointer(rebasing: envelope[header.messageRange]))
            call = IncomingCall(header: consume header, metadata: metadata, request: request, requestError: nil)
        } catch {
            call = IncomingCall(header: consume header, metadata: metadata, request: nil, requestError: error)
        }
    }
}

/// The framed protocol's part of a call: call ids (PROTOCOL.md 5.1), cancel frames and the
/// calls-in-flight limit. Everything else about a call is the service's.
extension Connection {
    /// The status for a call id already in flight on this connection.
    static let duplicateCallCode = Status.Code.alreadyExists

    func dispatch(_ call: consuming IncomingCall) {
        // The header read where it is, not copied out (a copy retains and releases its method).
        let callID = call.header.callID
        if call.header.cancel {
            cancelCall(callID)
            return
        }
        do throws(Status) {
            if callID == 0 { throw Status(code: .invalidArgument, message: "call_id: must not be 0") }
            if endCall(callID) {
                // PROTOCOL.md 5.1: the call in flight is dropped silently and the id gets one
                // final ALREADY_EXISTS, so "one end frame per call id" still holds.
                openCallEnded()
                throw Status(code: Self.duplicateCallCode, message: "call_id: \(callID) is already in flight")
            }
            // The server's admission step, as on every transport: calls in flight, the
            // method, the token; only then the request message (PROTOCOL.md 5.2).
            // A request decoded has no error: only an unknown method is UNIMPLEMENTED here.
            let methodIsKnown = call.requestError?.code != .unimplemented
            if let refusal = server.admitCall(
                method: call.header.method, methodIsKnown: methodIsKnown, callsInFlight: calls.count,
                authorization: call.metadata?.authorization, peerIsLocal: peerIsLocal)
            {
                throw refusal
            }
            if let error = call.metadata?.error { throw error.status }
            guard let request = call.request else {
                throw call.requestError ?? Status(code: .internalError, message: "request not decoded")
            }
            let milliseconds = call.header.timeoutMilliseconds
            let timeout = milliseconds > 0 ? Duration.milliseconds(milliseconds) : nil
            // No metadata (nearly every call): the service gets the empty value, a nil reference.
            let metadata = call.metadata?.entries ?? CallMetadata()
            if let open = service.handle(request, callID: callID, timeout: timeout, metadata: metadata, responder: self)
            {
                calls[callID] = open
            }
        } catch {
            server.callRefused(method: call.header.method, code: error.code)
            finish(callID, status: error)
        }
    }

    private func cancelCall(_ callID: UInt64) {
        // A call already finished (its answer may be on the way) is not an error.
        guard let call = calls.removeValue(forKey: callID) else { return }
        service.end(call, answering: Status(code: .cancelled, message: "cancelled by the client"))
        openCallEnded()
    }

    /// Withdraws an open call without answering it; false when it is not open.
    func endCall(_ callID: UInt64) -> Bool {
        // Most calls are answered at once, so `calls` is usually empty: skip hashing the id.
        guard !calls.isEmpty, let call = calls.removeValue(forKey: callID) else { return false }
        service.end(call, answering: nil)
        return true
    }
}
