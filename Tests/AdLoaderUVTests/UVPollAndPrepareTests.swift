import Testing

@testable import AdLoaderUV

#if canImport(Glibc)
    import Glibc
#endif

/// The wrappers a libcurl driver needs: a poll on a descriptor it owns, and work before the poll.
@Suite struct UVPollAndPrepareTests {
    @Test func aPollReportsReadableOnceBytesArriveAndNeverClosesTheDescriptor() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let loop = try UVLoop()
        let poll = try UVPoll(loop: loop, fileDescriptor: fds[0])
        var seen: [UVPoll.Events] = []
        var prepared = 0
        let prepare = try UVPrepare(loop: loop)
        prepare.start { prepared += 1 }
        try poll.start(.readable) { result in
            if case .success(let events) = result { seen.append(events) }
            var byte: UInt8 = 0
            _ = read(fds[0], &byte, 1)
            poll.close()
            prepare.close()
        }
        // Nothing readable yet: a non-blocking pass reports nothing.
        _ = loop.runNoWait()
        #expect(seen.isEmpty)
        #expect(prepared >= 1, "prepare runs before each poll")
        var byte: UInt8 = 7
        #expect(write(fds[1], &byte, 1) == 1)
        loop.run()
        #expect(seen == [.readable])
        #expect(fcntl(fds[0], F_GETFD) != -1, "the poll closed a descriptor it does not own")
        try loop.close()
    }

    @Test func aPollOnABadDescriptorFailsAtInit() throws {
        let loop = try UVLoop()
        #expect(throws: UVError.self) { _ = try UVPoll(loop: loop, fileDescriptor: -1) }
        try loop.close()
    }

    @Test func aStoppedPrepareNoLongerRuns() throws {
        let loop = try UVLoop()
        let prepare = try UVPrepare(loop: loop)
        var runs = 0
        prepare.start { runs += 1 }
        _ = loop.runNoWait()
        prepare.stop()
        #expect(!prepare.isActive)
        _ = loop.runNoWait()
        #expect(runs == 1)
        prepare.close()
        #expect(loop.runUntilIdle())
        try loop.close()
    }
}
