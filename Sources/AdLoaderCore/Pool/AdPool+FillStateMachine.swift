extension AdPool {
    /// Why a top-up was asked for: explicit calls load even when automatic fills are held back.
    enum FillTrigger: Equatable {
        /// A prefetch or borrow from a client.
        case explicit
        /// A sweep, a consumed or expired return, a reclaim, a retry timer.
        case automatic
    }

    /// Decides when a pool may ask its source for ads, after failures and while unreachable.
    ///
    /// A value type with one mutating method per event, each returning the ``Action`` the
    /// owner carries out (schedule or cancel a timer, top up, probe). It never touches timers
    /// or the source itself, so every transition is testable on its own.
    struct FillStateMachine: Equatable {
        enum State: Equatable {
            /// Automatic and explicit top-ups load.
            case ready
            /// A retry timer is pending; only explicit calls load until it fires.
            case backingOff
            /// Retries are used up or the failure was final; only explicit calls load.
            case suspended
            /// The source cannot be reached: nothing loads but one probe per interval.
            case unreachable
        }

        enum Action: Equatable {
            case none
            /// Schedule the retry timer; `attempt` counts the retries already made (0 = first).
            case scheduleRetry(attempt: Int)
            /// Cancel the retry timer (if any) and schedule the next probe.
            case scheduleProbe
            /// Cancel a pending retry timer.
            case cancelRetry
            /// Cancel the probe timer and top up automatically: the source answers again.
            case resume
            /// Top up automatically (a retry is due).
            case topUp
            /// Send one single-ad probe.
            case probe
        }

        private(set) var state: State = .ready
        /// Automatic retries made since the last success.
        private(set) var retries = 0
        var maximumRetries: Int

        init(maximumRetries: Int) {
            self.maximumRetries = maximumRetries
        }

        /// Whether a top-up for `trigger` may send requests now.
        func allowsLoad(_ trigger: FillTrigger) -> Bool {
            switch state {
            case .ready: true
            case .backingOff, .suspended: trigger == .explicit
            case .unreachable: false
            }
        }

        mutating func loadSucceeded() -> Action {
            retries = 0
            switch state {
            case .unreachable:
                state = .ready
                return .resume
            case .suspended:
                state = .ready
                return .none
            case .ready, .backingOff:
                // A pending retry stays: it fills what the failed batch left missing.
                return .none
            }
        }

        mutating func loadFailed(_ code: UpstreamError.Code, probe: Bool) -> Action {
            if state == .unreachable {
                // Only the probe's own answer schedules the next probe; older requests that
                // fail now change nothing.
                return probe ? .scheduleProbe : .none
            }
            switch code {
            case .unreachable:
                state = .unreachable
                return .scheduleProbe
            case .final:
                state = .suspended
                return .cancelRetry
            default:
                if state == .backingOff { return .none }  // one retry covers every failed batch
                guard retries < maximumRetries else {
                    state = .suspended
                    return .none
                }
                state = .backingOff
                return .scheduleRetry(attempt: retries)
            }
        }

        mutating func retryTimerFired() -> Action {
            guard state == .backingOff else { return .none }
            retries += 1
            state = .ready
            return .topUp
        }

        func probeTimerFired() -> Action {
            state == .unreachable ? .probe : .none
        }

        /// Back to the initial state (the loader was disabled); the owner cancels timers.
        mutating func reset() {
            state = .ready
            retries = 0
        }
    }
}
