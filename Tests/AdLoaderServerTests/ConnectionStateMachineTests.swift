import Testing

@testable import AdLoaderServer

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
        var state = machine(partial: .seconds(1))
        state.received(at: 0, hasPartialFrame: true)
        #expect(state.outputChanged(unsent: 1_500) == .pauseReading)
        if case .close = state.checkTimeouts(now: 2_000, hasOpenCalls: true) { Issue.record("closed while paused") }
    }
}
