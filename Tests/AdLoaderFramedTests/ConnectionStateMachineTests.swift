import Testing

@testable import AdLoaderFramed
@testable import AdLoaderService

@Suite struct ConnectionStateMachineTests {
    private func machine(idle: Duration = .seconds(300), partial: Duration = .seconds(10), unsent: Int = 1_000)
        -> Connection.StateMachine
    {
        var limits = ServerLimits()
        limits.idleTimeout = idle
        limits.partialFrameTimeout = partial
        limits.maxUnsentOutputPerConnection = unsent
        limits.maxMessageSize = 100
        return Connection.StateMachine(now: 0, limits: limits)
    }

    @Test func aConnectionThatNeverSendsItsPrefaceHitsThePartialFrameTimeout() {
        let state = machine()
        #expect(state.nextDeadline(hasOpenCalls: false) == 10_000)
        if case .checkAgain(let at) = state.checkTimeouts(now: 9_999, hasOpenCalls: false) {
            #expect(at == 10_000)
        } else {
            Issue.record("closed early")
        }
        guard case .close(let status) = state.checkTimeouts(now: 10_000, hasOpenCalls: false) else {
            Issue.record("not closed")
            return
        }
        #expect(status.code == .deadlineExceeded)
        #expect(status.message == "partial frame not completed within 10 s")
    }

    @Test func partialFramesCountFromTheirFirstByte() {
        var state = machine()
        state.received(at: 100, hasPartialFrame: false)
        #expect(state.partialSince == nil)
        state.received(at: 200, hasPartialFrame: true)
        state.received(at: 5_000, hasPartialFrame: true)  // a slow trickle does not extend it
        #expect(state.partialSince == 200)
        guard case .close = state.checkTimeouts(now: 10_200, hasOpenCalls: true) else {
            Issue.record("a stalled frame was not closed")
            return
        }
    }

    @Test func idleCountsOnlyWithoutOpenCalls() {
        var state = machine(idle: .seconds(1))
        state.received(at: 0, hasPartialFrame: false)
        if case .close = state.checkTimeouts(now: 5_000, hasOpenCalls: true) { Issue.record("closed with a call open") }
        state.callsEnded(at: 5_000)
        if case .close = state.checkTimeouts(now: 5_999, hasOpenCalls: false) { Issue.record("closed early") }
        guard case .close(let status) = state.checkTimeouts(now: 6_000, hasOpenCalls: false) else {
            Issue.record("not closed")
            return
        }
        #expect(status.code == .unavailable)
        #expect(status.message == "idle for 1 s")
    }

    @Test func outputAboveTheLimitPausesReadingUntilHalfDrained() {
        var state = machine(unsent: 1_000)
        #expect(state.outputChanged(unsent: 1_000) == .none)
        #expect(state.outputChanged(unsent: 1_001) == .pauseReading)
        #expect(state.readingPaused)
        #expect(state.outputChanged(unsent: 1_500) == .none)
        #expect(state.outputChanged(unsent: 501) == .none)
        #expect(state.outputChanged(unsent: 500) == .resumeReading)
        #expect(!state.readingPaused)
    }

    @Test func outputAtTheHardLimitCloses() {
        var state = machine(unsent: 1_000)
        _ = state.outputChanged(unsent: 2_000)
        guard case .close = state.outputChanged(unsent: 2_100) else {
            Issue.record("not closed at 2x the limit + one message")
            return
        }
    }

    @Test func aPausedConnectionIsNotClosedForTheFramesItHasNotRead() {
        var state = machine(idle: .seconds(300), partial: .seconds(1))
        state.received(at: 0, hasPartialFrame: true)
        #expect(state.outputChanged(unsent: 1_500) == .pauseReading)
        // The partial-frame deadline is left out while paused; idleness still counts.
        #expect(state.nextDeadline(hasOpenCalls: false) == 300_000)
        #expect(state.checkTimeouts(now: 2_000, hasOpenCalls: false) == .checkAgain(at: 300_000))
        #expect(state.checkTimeouts(now: 2_000, hasOpenCalls: true) == .checkAgain(at: 302_000))
    }

    /// A deadline at or before `now` makes the loop's timer fire again at once, forever.
    @Test(arguments: [false, true])
    func whilePausedTheNextCheckIsAlwaysLaterThanNow(hasOpenCalls: Bool) {
        var state = machine(idle: .seconds(300), partial: .seconds(2))
        state.received(at: 1_000, hasPartialFrame: true)
        #expect(state.outputChanged(unsent: 1_500) == .pauseReading)
        for now: Int64 in [2_999, 3_000, 3_001, 10_000, 299_999] {
            guard case .checkAgain(let at) = state.checkTimeouts(now: now, hasOpenCalls: hasOpenCalls) else {
                Issue.record("closed at \(now) while paused")
                continue
            }
            #expect(at > now, "check again at \(at), not after now = \(now)")
        }
    }

    @Test func resumingRestartsThePartialFrameClock() {
        var state = machine(partial: .seconds(1))
        state.received(at: 0, hasPartialFrame: true)
        #expect(state.outputChanged(unsent: 1_500) == .pauseReading)
        #expect(state.outputChanged(unsent: 500) == .resumeReading)
        state.readingResumed(at: 5_000)
        #expect(state.partialSince == 5_000)
        #expect(state.checkTimeouts(now: 5_999, hasOpenCalls: true) == .checkAgain(at: 6_000))
        guard case .close = state.checkTimeouts(now: 6_000, hasOpenCalls: true) else {
            Issue.record("a frame stalled after the resume was not closed")
            return
        }
    }

    @Test func aCompletedFrameRestartsThePartialFrameClock() {
        var state = machine(partial: .seconds(1))
        state.received(at: 0, hasPartialFrame: true)
        // Every read ends inside a frame, but frames keep completing.
        for now in stride(from: Int64(500), through: 5_000, by: 500) {
            state.received(at: now, hasPartialFrame: true, completedFrame: true)
            #expect(state.checkTimeouts(now: now + 999, hasOpenCalls: true) == .checkAgain(at: now + 1_000))
        }
        #expect(state.partialSince == 5_000)
    }
}
