import AdLoaderService
import AdLoaderWire

/// One HTTP/2 stream of a gRPC connection: the request's headers and message bytes as they
/// arrive, and the answer waiting for nghttp2 to take it.
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

    let id: Int32
    // Request headers.
    var path = ""
    var httpMethod = ""
    var contentType: String?
    var encoding: String?
    var timeoutValue: String?
    var authorization: String?
    var headerListSize = 0
    /// The header list's size when it first went over the limit (0: it has not).
    var headerListOverflowSize = 0
    var route: Route?
    /// When set, the request is refused with this status (and HTTP status) once its headers
    /// are in; the rest of it is ignored.
    var refusal: (status: Status, httpStatus: Int)?
    /// Set once the headers were checked and the call accepted.
    var accepted = false
    /// The deadline from `grpc-timeout`.
    var timeout: Duration?

    // Request messages.
    /// Bytes received and not yet cut into messages.
    var body: [UInt8] = []
    var bodyStart = 0
    /// The request message of a unary or server-streaming call.
    var message: [UInt8]?
    var messageCount = 0
    var requestEnded = false

    // The call.
    var call: OpenCall?
    var dispatched = false

    // The answer.
    var responseStarted = false
    /// Length-prefixed messages not yet taken by nghttp2.
    var pending: [UInt8] = []
    var pendingStart = 0
    /// The final status, sent as trailers once `pending` is taken.
    var trailer: Status?
    /// The final status went out (trailers, or a trailers-only response).
    var finished = false
    /// nghttp2 was told to wait for data (`NGHTTP2_ERR_DEFERRED`).
    var deferred = false

    init(id: Int32) { self.id = id }

    var pendingCount: Int { pending.count - pendingStart }
}
