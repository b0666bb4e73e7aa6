public import AdLoaderCore
public import AdLoaderFramed
public import AdLoaderLogging
public import AdLoaderService
import AdLoaderUV
public import AdLoaderWire

/// The daemon's stack without sockets or libuv, on a ``ManualClock``: a real loader, the real
/// ``AdLoaderService`` and the real ``FramedTransport``, with ``InProcessStream``s as
/// connections. Timeouts, back-pressure, drain and deadlines run as in the daemon, at
/// instants the test chooses.
///
/// After every step that can produce output the test calls ``settle()`` (the end of a loop
/// iteration: deferred flushes run).
public final class InProcessTransport {
    public let clock: ManualClock
    public let loader: NativeAdvertisementLoader
    public let service: AdLoaderService
    /// What every transport of this server shares (give it to a second transport under test).
    public let server: ServerContext
    public let transport: FramedTransport
    public let deferred = ManualDeferredWork()

    public init(
        loaders: [LoaderConfiguration], sources: [String: any DemandSource], limits: ServerLimits = ServerLimits(),
        clock: ManualClock, logger: Logger = Logger(level: .error),
        authenticator: CallAuthenticator = CallAuthenticator()
    ) throws {
        self.clock = clock
        loader = try NativeAdvertisementLoader(loaders: loaders, sources: sources, clock: clock, scheduler: clock)
        service = AdLoaderService(
            loader: loader, limits: limits, clock: clock, scheduler: clock, logger: logger, authenticator: authenticator
        )
        server = ServerContext(service: service, limits: limits)
        transport = FramedTransport(server: server, clock: clock, scheduler: clock, deferred: deferred, logger: logger)
    }

    /// Opens a connection; the client has not sent anything yet.
    public func connect(window: Int? = nil) -> InProcessClient {
        let stream = InProcessStream(window: window)
        transport.accept(stream, peer: "in-process")
        return InProcessClient(stream: stream, owner: self)
    }

    /// Ends the loop iteration: flushes connections answered outside their read callback.
    public func settle() { deferred.runPending() }

    /// Advances the manual clock, then settles.
    public func advance(by duration: Duration) {
        clock.advance(by: duration)
        settle()
    }
}

/// The client side of one in-process connection: sends frames, reads the server's frames.
public final class InProcessClient {
    public let stream: InProcessStream
    private unowned let owner: InProcessTransport
    private var decoder = FrameDecoder(maximumMessageSize: 1 << 30)
    private var prefaceLeft = ProtocolPreface.count
    private var nextCallID: UInt64 = 1

    init(stream: InProcessStream, owner: InProcessTransport) {
        self.stream = stream
        self.owner = owner
    }

    /// Sends the client preface.
    public func sendPreface() { send(ProtocolPreface.bytes) }

    /// Sends raw bytes, then settles.
    public func send(_ bytes: [UInt8]) {
        stream.clientSends(bytes)
        owner.settle()
    }

    /// Sends one call; returns its call id.
    @discardableResult
    public func start(
        _ method: String, _ request: some WireMessage, callID: UInt64? = nil, timeoutMilliseconds: UInt32 = 0
    ) -> UInt64 {
        let id = callID ?? nextCallID
        nextCallID = max(nextCallID, id) + 1
        var bytes: [UInt8] = []
        RequestFrame(callID: id, method: method, request: request, timeoutMilliseconds: timeoutMilliseconds)
            .appendFrame(to: &bytes)
        send(bytes)
        return id
    }

    /// Cancels call `callID`.
    public func cancel(_ callID: UInt64) {
        var bytes: [UInt8] = []
        RequestFrame.cancel(callID: callID).appendFrame(to: &bytes)
        send(bytes)
    }

    /// Whether the server sent its preface; read by ``frames()``.
    public private(set) var receivedPreface = false

    /// Every whole frame received since the last call (the server's preface is checked and
    /// skipped).
    /// - Throws: ``FrameError`` when the server's bytes are not frames.
    public func frames() throws -> [ResponseFrame] {
        var bytes = stream.takeReceived()[...]
        if prefaceLeft > 0 {
            let take = min(prefaceLeft, bytes.count)
            let expected = ProtocolPreface.bytes[(ProtocolPreface.count - prefaceLeft)...].prefix(take)
            guard bytes.prefix(take).elementsEqual(expected) else {
                throw FrameError(code: .badPreface, message: "not the server preface")
            }
            prefaceLeft -= take
            bytes = bytes.dropFirst(take)
            receivedPreface = prefaceLeft == 0
        }
        decoder.append(Array(bytes))
        var result: [ResponseFrame] = []
        while let body = try decoder.next() {
            let frame = try body.withUnsafeBytes { (raw) throws(FrameError) -> ResponseFrame in
                try ResponseFrame(decoding: raw)
            }
            result.append(frame)
        }
        return result
    }

    /// The server closed the connection.
    public var isClosed: Bool { stream.isClosed }
}
