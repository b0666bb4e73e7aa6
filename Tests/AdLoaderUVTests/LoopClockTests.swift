import AdLoaderTime
import Testing

@testable import AdLoaderUV

@Suite struct LoopClockTests {
    /// Runs `body` on a fresh loop with a clock, then runs the loop until it has nothing left
    /// to do — bounded by a watchdog timer — and checks that the loop closes cleanly.
    private func withLoop(_ body: (UVLoop, LoopClock, @escaping () -> Void) throws -> Void) throws -> Bool {
        let loop = try UVLoop()
        let clock = try LoopClock(loop: loop)
        let watchdog = try UVTimer(loop: loop)
        var timedOut = false
        watchdog.start(timeout: 5_000) {
            timedOut = true
            clock.close()
            watchdog.close()
        }
        let finish = {
            watchdog.close()
            clock.close()
        }
        try body(loop, clock, finish)
        loop.run()
        try loop.close()
        return !timedOut
    }

    @Test func runsActionsInDeadlineOrderThenScheduleOrder() throws {
        var order: [String] = []
        var tasks: [any ScheduledTask] = []
        let finished = try withLoop { _, clock, finish in
            let start = clock.now
            tasks.append(clock.schedule(at: start + .milliseconds(30)) { order.append("c") })
            tasks.append(clock.schedule(at: start + .milliseconds(10)) { order.append("a1") })
            tasks.append(clock.schedule(at: start + .milliseconds(10)) { order.append("a2") })
            tasks.append(clock.schedule(at: start + .milliseconds(20)) { order.append("cancelled") })
            tasks.append(clock.schedule(at: start + .seconds(-1)) { order.append("past") })
            tasks.append(
                clock.schedule(at: start + .milliseconds(40)) {
                    order.append("d")
                    #expect(clock.now >= start + .milliseconds(40))
                    finish()
                })
            tasks[3].cancel()
            #expect(order.isEmpty, "an action ran inside schedule(at:)")
            #expect(clock.pendingCount == 5)
        }
        #expect(finished)
        #expect(order == ["past", "a1", "a2", "c", "d"])
    }

    @Test func actionsScheduledByActionsRunOnALaterFiring() throws {
        var order: [Int] = []
        let finished = try withLoop { _, clock, finish in
            _ = clock.schedule(at: clock.now) {
                order.append(1)
                _ = clock.schedule(at: clock.now) {
                    order.append(3)
                    finish()
                }
                order.append(2)
            }
        }
        #expect(finished)
        #expect(order == [1, 2, 3])
    }

    @Test func manyCancelledTasksAreCompactedAndTheRestStillRun() throws {
        var ran = 0
        let finished = try withLoop { _, clock, finish in
            var tasks: [any ScheduledTask] = []
            for index in 0..<1_000 {
                tasks.append(clock.schedule(at: clock.now + .milliseconds(Int64(index % 7))) { ran += 1 })
            }
            for (index, task) in tasks.enumerated() where index % 10 != 0 { task.cancel() }
            #expect(clock.pendingCount == 100)
            _ = clock.schedule(at: clock.now + .milliseconds(20)) { finish() }
        }
        #expect(finished)
        #expect(ran == 100)
    }

    @Test func nowStartsAtTheGivenInstantAndNeverGoesBack() throws {
        let loop = try UVLoop()
        let clock = try LoopClock(loop: loop, start: AdInstant(unixMilliseconds: 1_000_000))
        #expect(clock.now.unixMilliseconds == 1_000_000)
        clock.close()
        loop.run()
        try loop.close()
        let finished = try withLoop { _, clock, finish in
            var last = clock.now
            var count = 0
            func tick() {
                _ = clock.schedule(at: clock.now + .milliseconds(1)) {
                    #expect(clock.now >= last)
                    last = clock.now
                    count += 1
                    if count == 5 { finish() } else { tick() }
                }
            }
            tick()
        }
        #expect(finished)
    }

    /// An action that keeps rescheduling itself at `now` (or in the past) must not keep the
    /// loop in its timer phase: other work gets a turn between two runs. Bounded by a count,
    /// so a starving clock fails instead of hanging.
    @Test(arguments: [Duration.zero, .seconds(-5)])
    func anActionReschedulingItselfAsDueLetsTheLoopTurn(offset: Duration) throws {
        var events: [Character] = []
        let loop = try UVLoop()
        let clock = try LoopClock(loop: loop)
        let idle = try UVIdle(loop: loop)
        idle.start {
            if events.last != "i" { events.append("i") }
        }
        var runs = 0
        func again() {
            _ = clock.schedule(at: clock.now + offset) {
                events.append("t")
                runs += 1
                if runs == 20 {
                    idle.close()
                    clock.close()
                } else {
                    again()
                }
            }
        }
        again()
        loop.run()
        try loop.close()
        let timerRuns = events.filter { $0 == "t" }.count
        #expect(timerRuns == 20)
        // Between two runs of the action, the loop went through at least one iteration.
        #expect(!String(events).contains("tt"), "runs back to back in one timer pass: \(String(events))")
    }
}
