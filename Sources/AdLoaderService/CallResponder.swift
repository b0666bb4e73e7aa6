public import AdLoaderWire

/// How the service answers a call: what a transport implements, per connection or per call.
///
/// A call is identified by the id the transport gave it in
/// ``AdLoaderService/handle(_:callID:timeout:responder:)``. Every call gets exactly one final
/// answer: ``answer(_:_:)`` (status OK) or ``finish(_:status:)``. A server-streaming call
/// (Watch) sends its messages with ``stream(_:_:)`` before its final status.
///
/// - Important: loop-confined, like the service.
public protocol CallResponder: AnyObject {
    /// Whether answers can still be delivered (false once the client went away or the
    /// transport stopped reading calls).
    var isOpen: Bool { get }
    /// Bytes answered and not yet taken by the client; the service ends a Watch whose client
    /// reads too slowly (``ServerLimits/maxUnsentOutputPerConnection``).
    var unsentByteCount: Int { get }

    /// The final OK answer of a unary call (status OK): one entry point for every method, so
    /// a new call adds a message and a handler in the service, nothing here.
    func answer(_ callID: UInt64, _ response: ServiceResponse)
    /// The size this transport's message size limit applies to for a final OK answer to
    /// `callID` carrying a message of `messageSize` bytes (the framed envelope, or the gRPC
    /// message itself): what the service checks before answering a Stats.
    func answerSize(_ callID: UInt64, messageSize: Int) -> Int
    /// One streamed message of an open server-streaming call (a Watch's events): any wire
    /// message, so a new streaming method, like a new unary one, touches no transport.
    func stream(_ callID: UInt64, _ message: some WireMessage)
    /// The final answer with a status and no message.
    func finish(_ callID: UInt64, status: Status)
    /// Metadata for the call's answer (gRPC: added to its response headers, or to the
    /// trailers-only response), on top of the service's ``AdLoaderService/responseMetadata``
    /// every answer carries. Called before the call's first answer; a transport whose answers
    /// carry no metadata (the framed envelope, PROTOCOL.md 4) drops it.
    func addResponseMetadata(_ callID: UInt64, _ metadata: CallMetadata)
    /// The service ended an ``OpenCall`` by itself (served, deadline, slow watcher, drain):
    /// forget it. Its final answer follows at once.
    func openCallEnded(_ call: OpenCall)
}
