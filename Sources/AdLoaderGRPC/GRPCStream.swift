import AdLoaderService
import AdLoaderWire

/// One HTTP/2 stream of a gRPC connection: the request's headers and message as they arrive,
/// and the answer waiting for nghttp2 to take it.
///
/// A connection keeps the streams of its finished calls for the next ones (``reset(id:)``), so
/// a call at steady state allocates neither the object nor its buffers.
///
/// - Important: loop-confined; owned by its ``GRPCConnection``.
final class GRPCStream {
    /// Which service a stream's path names.
    enum Route: Equatable {
        /// A method of `adloader.v1.NativeAdLoader` (through ``AdLoaderService``).
        case service
        case healthCheck
        case healthWatch
        /// `ServerReflectionInfo` of v1 or v1alpha (the same messages).
        case reflection
    }

    // Stored properties are `@exclusivity(unchecked)`, as in the framed transport: the object
    // is confined to the loop thread and no method holds an access across a call that
    // re-enters it; the runtime's dynamic checks (swift_beginAccess) were ~3.4 % of the daemon's
    // instructions per gRPC call (callgrind).
    @exclusivity(unchecked) private(set) var id: Int32
    /// Where the stream is in its connection's ``OpenStreams`` (-1: not open).
    @exclusivity(unchecked) fileprivate(set) var slot = -1
    // Request headers.
    @exclusivity(unchecked) var path = ""
    @exclusivity(unchecked) var httpMethod = ""
    @exclusivity(unchecked) var contentType: String?
    /// `content-type` is exactly `application/grpc` (checked on its bytes).
    @exclusivity(unchecked) var contentTypeIsGRPC = false
    /// The route of `path` when it is a known one (found on its bytes).
    @exclusivity(unchecked) var pathRoute: Route?
    @exclusivity(unchecked) var encoding: String?
    @exclusivity(unchecked) var timeoutValue: String?
    @exclusivity(unchecked) var authorization: String?
    /// The request headers that are the call's metadata (``CallMetadata/isTransportKey(_:)``
    /// says which are not); empty, holding no storage, for a call without any.
    @exclusivity(unchecked) var metadata = CallMetadata()
    /// Metadata the service added for the answer's headers (``GRPCConnection/addResponseMetadata(_:_:)``).
    @exclusivity(unchecked) var responseMetadata = CallMetadata()
    @exclusivity(unchecked) var headerListSize = 0
    /// The header list's size when it first went over the limit (0: it has not).
    @exclusivity(unchecked) var headerListOverflowSize = 0
    @exclusivity(unchecked) var route: Route?
    /// When set, the request is refused with this status (and HTTP status) once its headers
    /// are in; the rest of it is ignored.
    @exclusivity(unchecked) var refusal: (status: Status, httpStatus: Int)?
    /// Set once the headers were checked and the call accepted.
    @exclusivity(unchecked) var accepted = false
    /// The deadline from `grpc-timeout`.
    @exclusivity(unchecked) var timeout: Duration?

    // Request messages.
    /// Bytes of a message split across DATA frames, not yet whole (a message that arrives in
    /// one piece is decoded where nghttp2 holds it and never copied here).
    @exclusivity(unchecked) var body: [UInt8] = []
    @exclusivity(unchecked) var bodyStart = 0
    /// Whether the request message of a service call is in ``serviceMessage``.
    @exclusivity(unchecked) private(set) var hasServiceMessage = false
    // The request message of a service call (unframed), decoded once the request ends: its few
    // bytes are copied into memory the stream keeps for its next calls. A decoded
    // `ServiceRequest` kept in the stream until then was copied and destroyed through
    // `Optional`'s generic value witnesses three times per call (~600 instructions, callgrind),
    // and an array's append and removeAll cost ~340 more.
    @exclusivity(unchecked) private var messageStorage: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var messageCapacity = 0
    @exclusivity(unchecked) private var messageLength = 0
    /// The request message of a health call (its own small decoder).
    @exclusivity(unchecked) var message: [UInt8]?
    @exclusivity(unchecked) var messageCount = 0
    @exclusivity(unchecked) var requestEnded = false

    // The call.
    @exclusivity(unchecked) var call: OpenCall?
    @exclusivity(unchecked) var dispatched = false

    // The answer.
    @exclusivity(unchecked) var responseStarted = false
    /// Length-prefixed messages not yet taken by nghttp2.
    @exclusivity(unchecked) var pending: [UInt8] = []
    @exclusivity(unchecked) var pendingStart = 0
    /// The final status, sent as trailers once `pending` is taken.
    @exclusivity(unchecked) var trailer: Status?
    /// The final status went out (trailers, or a trailers-only response).
    @exclusivity(unchecked) var finished = false
    /// nghttp2 was told to wait for data (`NGHTTP2_ERR_DEFERRED`).
    @exclusivity(unchecked) var deferred = false

    init(id: Int32) { self.id = id }

    deinit { messageStorage?.deallocate() }

    /// The request message kept by ``keepServiceMessage(_:)`` (empty before).
    var serviceMessage: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: messageStorage, count: hasServiceMessage ? messageLength : 0)
    }

    /// Keeps a copy of `message`, the request message of a service call.
    func keepServiceMessage(_ message: UnsafeRawBufferPointer) {
        if message.count > messageCapacity {
            messageStorage?.deallocate()
            messageCapacity = max(message.count, 64)
            messageStorage = .allocate(byteCount: messageCapacity, alignment: 8)
        }
        if let source = message.baseAddress, let storage = messageStorage, message.count > 0 {
            storage.copyMemory(from: source, byteCount: message.count)
        }
        messageLength = message.count
        hasServiceMessage = true
    }

    var pendingCount: Int { pending.count - pendingStart }

    /// A closed stream kept for reuse: it answers to no id and holds no call;
    /// the rest is cleared when it is reused (``reset(id:)``), not twice per call.
    func retire() {
        id = 0
        call = nil
    }

    /// Makes a finished stream a new one with `id`, keeping its buffers' storage.
    func reset(id: Int32) {
        self.id = id
        path = ""
        httpMethod = ""
        contentType = nil
        contentTypeIsGRPC = false
        pathRoute = nil
        encoding = nil
        timeoutValue = nil
        authorization = nil
        if !metadata.isEmpty { metadata = CallMetadata() }
        if !responseMetadata.isEmpty { responseMetadata = CallMetadata() }
        headerListSize = 0
        headerListOverflowSize = 0
        route = nil
        refusal = nil
        accepted = false
        timeout = nil
        // Emptied only when not empty: removeAll(keepingCapacity:) is ~170 instructions even
        // then (callgrind).
        if !body.isEmpty || body.capacity > 64 * 1024 { body.removeAll(keepingCapacity: body.capacity <= 64 * 1024) }
        bodyStart = 0
        hasServiceMessage = false
        messageLength = 0
        if messageCapacity > 64 * 1024 {
            messageStorage?.deallocate()
            messageStorage = nil
            messageCapacity = 0
        }
        message = nil
        messageCount = 0
        requestEnded = false
        call = nil
        dispatched = false
        responseStarted = false
        if !pending.isEmpty || pending.capacity > 64 * 1024 {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
        }
        pendingStart = 0
        trailer = nil
        finished = false
        deferred = false
    }
}

/// The open streams of a connection: an array in which each stream knows its place, so that
/// opening and closing one hashes nothing (a dictionary by stream id cost two hashes of the id
/// and the dictionary's bookkeeping per call, ~500 instructions, callgrind). Streams are found
/// by id through nghttp2's stream user data (``GRPCConnection/openStream(_:)``).
struct OpenStreams {
    /// In no particular order.
    private(set) var values: [GRPCStream] = []

    var count: Int { values.count }
    var isEmpty: Bool { values.isEmpty }

    mutating func insert(_ stream: GRPCStream) {
        precondition(stream.slot < 0, "stream \(stream.id) is open already")
        stream.slot = values.count
        values.append(stream)
    }

    /// Removes `stream`. - Returns: whether it was open.
    @discardableResult
    mutating func remove(_ stream: GRPCStream) -> Bool {
        let slot = stream.slot
        guard slot >= 0, slot < values.count, values[slot] === stream else { return false }
        let last = values.removeLast()
        if last !== stream {
            values[slot] = last
            last.slot = slot
        }
        stream.slot = -1
        return true
    }

    mutating func removeAll() {
        for stream in values { stream.slot = -1 }
        values = []
    }
}
