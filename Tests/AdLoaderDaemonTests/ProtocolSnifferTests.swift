import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderUV
import Testing

@testable import AdLoaderDaemon

/// The piece in front of both transports: each connection goes to exactly one, with every
/// byte it sent, decided by its first bytes.
@Suite struct ProtocolSnifferTests {
    /// Records what it was given and reads the stream's bytes from then on.
    final class Recorder: ByteStreamAcceptor {
        var streams: [any ByteStream] = []
        var bytes: [UInt8] = []

        func accept(_ stream: any ByteStream, peer: String) {
            streams.append(stream)
            try? stream.readStart { [unowned self] result in
                if case .success(let chunk) = result { self.bytes += chunk }
            }
        }
    }

    let clock = ManualClock()
    let framed = Recorder()
    let http2 = Recorder()

    func sniffer(maxPending: Int = 8) -> ProtocolSniffer {
        ProtocolSniffer(
            framed: framed, http2: http2, clock: clock, scheduler: clock, timeout: .seconds(1), maxPending: maxPending,
            logger: Logger(level: .error))
    }

    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    @Test func theHTTP2PrefaceGoesToHTTP2WithEveryByte() {
        let sniffer = sniffer()
        let stream = InProcessStream()
        sniffer.accept(stream, peer: "test")
        stream.clientSends(Self.http2Preface + [0, 0, 0, 4])
        #expect(http2.streams.count == 1 && framed.streams.isEmpty)
        stream.clientSends([9])
        #expect(http2.bytes == Self.http2Preface + [0, 0, 0, 4, 9])
        #expect(sniffer.pendingCount == 0)
    }

    @Test func thePrefaceByteByByteWaitsForAllOfIt() {
        let sniffer = sniffer()
        let stream = InProcessStream()
        sniffer.accept(stream, peer: "test")
        for byte in Self.http2Preface.dropLast() { stream.clientSends([byte]) }
        #expect(http2.streams.isEmpty && framed.streams.isEmpty && sniffer.pendingCount == 1)
        stream.clientSends([Self.http2Preface.last!])
        #expect(http2.bytes == Self.http2Preface && framed.streams.isEmpty)
    }

    @Test(arguments: [Array("ADLOADER/1\r\n".utf8), Array("PRI * HTTP/1.1\r\n".utf8), [0x50, 0x52, 0x00], [0xff]])
    func anythingElseGoesToTheFramedTransportAtTheFirstDifferentByte(_ sent: [UInt8]) {
        let sniffer = sniffer()
        let stream = InProcessStream()
        sniffer.accept(stream, peer: "test")
        stream.clientSends(sent)
        #expect(framed.bytes == sent && http2.streams.isEmpty)
    }

    @Test func silenceGoesToTheFramedTransportAfterTheTimeout() {
        let sniffer = sniffer()
        let stream = InProcessStream()
        sniffer.accept(stream, peer: "test")
        stream.clientSends(Array(Self.http2Preface.prefix(3)))
        clock.advance(by: .milliseconds(999))
        #expect(framed.streams.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(framed.bytes == Array(Self.http2Preface.prefix(3)) && http2.streams.isEmpty)
    }

    @Test func aClientThatLeavesFirstIsClosedAndOthersAreUnharmed() {
        let sniffer = sniffer(maxPending: 2)
        let leaving = InProcessStream()
        sniffer.accept(leaving, peer: "a")
        leaving.clientClosesSending()
        #expect(leaving.isClosed && sniffer.pendingCount == 0)
        let waiting = [InProcessStream(), InProcessStream()]
        for stream in waiting { sniffer.accept(stream, peer: "b") }
        let refused = InProcessStream()
        sniffer.accept(refused, peer: "c")
        #expect(refused.isClosed && sniffer.pendingCount == 2)
        waiting[0].clientSends(Self.http2Preface)
        #expect(http2.streams.count == 1 && framed.streams.isEmpty)
        sniffer.closeAll()
        #expect(waiting[1].isClosed && sniffer.pendingCount == 0)
    }
}

/// The sniffer is a list of routes: a third protocol is one more route.
@Suite struct ProtocolSnifferRouteTests {
    @Test func aThirdRouteGetsItsConnectionsAndTheOthersKeepTheirs() {
        let clock = ManualClock()
        let framed = ProtocolSnifferTests.Recorder()
        let http2 = ProtocolSnifferTests.Recorder()
        let third = ProtocolSnifferTests.Recorder()
        let sniffer = ProtocolSniffer(
            routes: [
                .init(preface: ProtocolSniffer.http2Preface, acceptor: http2),
                .init(preface: Array("PRX/1\r\n".utf8), acceptor: third),
            ],
            fallback: framed, clock: clock, scheduler: clock, timeout: .seconds(1), maxPending: 8,
            logger: Logger(level: .error))
        for (bytes, expected) in [
            (Array("PRX/1\r\nhello".utf8), third), (ProtocolSnifferTests.http2Preface, http2),
            (Array("ADLOADER/1\r\n".utf8), framed), (Array("PRZ".utf8), framed),
        ] {
            let stream = InProcessStream()
            sniffer.accept(stream, peer: "test")
            // Byte by byte: "PR" is a prefix of two routes' prefaces, then one, then none.
            for byte in bytes { stream.clientSends([byte]) }
            #expect(expected.streams.count >= 1, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(third.streams.count == 1 && http2.streams.count == 1 && framed.streams.count == 2)
        #expect(third.bytes == Array("PRX/1\r\nhello".utf8))
        #expect(sniffer.pendingCount == 0)
    }
}
