import AdLoaderWire
import Foundation

@testable import AdLoaderClient

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal in-process server for client tests: listens on 127.0.0.1 (port 0), serves one
/// connection on a thread with blocking sockets, and hands every request frame to `handler`.
final class FakeServer: Sendable {
    let port: Int
    private let listener: Int32
    private let connection = Locked<Int32>(-1)
    /// Every frame received, in order (requests and cancels).
    let received: AsyncStream<RequestFrame>
    private let receivedContinuation: AsyncStream<RequestFrame>.Continuation
    private let handler: @Sendable (RequestFrame, FakeServer) -> Void
    private let preface: [UInt8]

    init(preface: [UInt8] = ProtocolPreface.bytes, handler: @escaping @Sendable (RequestFrame, FakeServer) -> Void)
        throws
    {
        self.handler = handler
        self.preface = preface
        (received, receivedContinuation) = AsyncStream.makeStream()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in serve() }.start()
    }

    /// Sends one whole frame to the client.
    func send(_ frame: ResponseFrame) {
        var bytes: [UInt8] = []
        frame.append(to: &bytes)
        sendRaw(bytes)
    }

    func sendRaw(_ bytes: [UInt8]) {
        connection.withLock { fd in
            guard fd >= 0 else { return }
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Closes the client connection (the client sees EOF).
    func disconnect() {
        connection.withLock { fd in
            if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    func stop() {
        disconnect()
        _ = shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func serve() {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        connection.withLock { $0 = fd }
        var decoder = FrameDecoder(maximumMessageSize: 4 << 20, expectingPreface: true)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var sentPreface = false
        loop: while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            do {
                while true {
                    let body = try decoder.next()
                    // The preface goes out before any answer (next() checks the client's first).
                    if decoder.prefaceReceived && !sentPreface {
                        sentPreface = true
                        sendRaw(preface)
                    }
                    guard let body else { break }
                    let frame = try RequestFrame(decoding: body)
                    receivedContinuation.yield(frame)
                    handler(frame, self)
                }
            } catch {
                break loop
            }
        }
        receivedContinuation.finish()
        connection.withLock { fd in
            Glibc.close(fd)
            fd = -1
        }
    }
}
