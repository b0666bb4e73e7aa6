import AdLoaderUV

/// A stream whose first bytes were already read (by ``ProtocolSniffer``): the transport that
/// takes it reads those bytes first, in one chunk, then the stream's own.
///
/// - Important: loop-confined.
final class PrefixedByteStream: ByteStream {
    private let base: any ByteStream
    private var prefix: [UInt8]

    init(_ base: any ByteStream, prefix: [UInt8]) {
        self.base = base
        self.prefix = prefix
    }

    var queuedWriteBytes: Int { base.queuedWriteBytes }
    var sawEndOfFile: Bool { base.sawEndOfFile }
    var hasUnreadInput: Bool { !prefix.isEmpty || base.hasUnreadInput }

    func readStart(_ action: @escaping (Result<UnsafeRawBufferPointer, UVError>) -> Void) throws(UVError) {
        try base.readStart(action)
        // Delivered after the stream reads again, as the next callback would have: the
        // transport's reader is installed, and a transport that stops reading in it still
        // gets every byte later (libuv keeps the socket's).
        if !prefix.isEmpty {
            let bytes = prefix
            prefix = []
            bytes.withUnsafeBytes { action(.success($0)) }
        }
    }

    func resumeReading() throws(UVError) { try base.resumeReading() }
    func readStop() { base.readStop() }
    func tryWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) -> Int { try base.tryWrite(bytes) }
    func write(copying bytes: UnsafeRawBufferPointer, _ completion: @escaping (UVError?) -> Void) throws(UVError) {
        try base.write(copying: bytes, completion)
    }
    func close() { base.close() }
}
