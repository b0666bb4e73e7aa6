import Testing

@testable import AdLoaderCore

struct AdPoolFillStateMachineTests {
    typealias Machine = AdPool.FillStateMachine

    @Test func retryableFailuresScheduleGrowingAttemptsUpToTheMaximum() {
        var machine = Machine(maximumRetries: 2)
        #expect(machine.loadFailed(.retryable, probe: false) == .scheduleRetry(attempt: 0))
        #expect(!machine.allowsLoad(.automatic))
        #expect(machine.allowsLoad(.explicit))
        // A second batch failing while a retry is pending adds nothing.
        #expect(machine.loadFailed(.retryable, probe: false) == .none)
        #expect(machine.retryTimerFired() == .topUp)
        #expect(machine.loadFailed(.retryable, probe: false) == .scheduleRetry(attempt: 1))
        #expect(machine.retryTimerFired() == .topUp)
        #expect(machine.loadFailed(.retryable, probe: false) == .none)
        #expect(machine.state == .suspended)
        #expect(!machine.allowsLoad(.automatic))
        #expect(machine.allowsLoad(.explicit))
    }

    @Test func successRestartsTheCount() {
        var machine = Machine(maximumRetries: 1)
        _ = machine.loadFailed(.retryable, probe: false)
        _ = machine.retryTimerFired()
        #expect(machine.loadFailed(.retryable, probe: false) == .none)
        #expect(machine.state == .suspended)
        #expect(machine.loadSucceeded() == .none)
        #expect(machine.state == .ready)
        #expect(machine.retries == 0)
        #expect(machine.loadFailed(.retryable, probe: false) == .scheduleRetry(attempt: 0))
    }

    @Test func unreachableProbesUntilASuccessResumes() {
        var machine = Machine(maximumRetries: 10)
        _ = machine.loadFailed(.retryable, probe: false)
        #expect(machine.loadFailed(.unreachable, probe: false) == .scheduleProbe)
        #expect(!machine.allowsLoad(.explicit))
        #expect(machine.probeTimerFired() == .probe)
        // Older requests failing change nothing; a failed probe schedules the next one.
        #expect(machine.loadFailed(.retryable, probe: false) == .none)
        #expect(machine.loadFailed(.unreachable, probe: true) == .scheduleProbe)
        #expect(machine.loadSucceeded() == .resume)
        #expect(machine.allowsLoad(.automatic))
        #expect(machine.probeTimerFired() == .none)
    }

    @Test func finalFailureStopsAutomaticLoads() {
        var machine = Machine(maximumRetries: 10)
        _ = machine.loadFailed(.retryable, probe: false)
        #expect(machine.loadFailed(.final, probe: false) == .cancelRetry)
        #expect(machine.state == .suspended)
        #expect(machine.retryTimerFired() == .none)
        #expect(machine.allowsLoad(.explicit))
    }

    @Test(arguments: [0, 3])
    func zeroOrExhaustedRetriesSuspend(maximum: Int) {
        var machine = Machine(maximumRetries: maximum)
        for _ in 0..<maximum {
            _ = machine.loadFailed(.retryable, probe: false)
            _ = machine.retryTimerFired()
        }
        #expect(machine.loadFailed(.retryable, probe: false) == .none)
        #expect(machine.state == .suspended)
        machine.reset()
        #expect(machine.state == .ready)
    }
}
