import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdLoaderWire

extension Connection {
    /// The clocked part of a connection, as a value: idle and partial-frame timeouts and
    /// the unsent-output limit. One mutating method per event; the connection executes the
    /// returned action.
    struct StateMachine: Sendable {
        enum TimeoutAction: Equatable, Sendable {
            /// Nothing expired; check again at this Unix-ms instant.
            case checkAgain(at: Int64)
            /// Close with a connection-level status first (PROTOCOL.md 6.3).
            case close(Status)
        }

        enum OutputAction: Equatable, Sendable {
            case none
            /// Unsent output went above the limit: stop reading from the client.
            case pauseReading
            /// Output drained to half the limit: read again.
            case resumeReading
            /// Unsent output reached the hard limit (Watch events or completing parked
            /// calls kept coming while the client did not read).
            case close(reason: String)
        }

        let idleTimeout: Int64
        let partialFrameTimeout: Int64
        let maxUnsentOutput: Int
        /// Twice the limit plus one largest message: requests stop being processed at the
        /// limit, so only output nobody asked for just now (events, parked calls) gets here.
        let hardUnsentOutput: Int
        /// Last byte received, or last open call ended.
        private(set) var lastActivity: Int64
        /// When the preface or the frame still incomplete began; nil when nothing is pending.
        private(set) var partialSince: Int64?
        private(set) var readingPaused = false

        /// A connection just accepted: the preface is pending from now.
        init(now: Int64, limits: ServerLimits) {
            idleTimeout = limits.idleTimeout.milliseconds
            partialFrameTimeout = limits.partialFrameTimeout.milliseconds
            maxUnsentOutput = limits.maxUnsentOutputPerConnection
            hardUnsentOutput = 2 * limits.maxUnsentOutputPerConnection + limits.maxMessageSize
            lastActivity = now
            partialSince = now
        }

        /// Bytes arrived and were decoded as far as possible.
        /// - Parameters:
        ///   - hasPartialFrame: bytes of a frame (or of the preface) are still incomplete.
        ///   - completedFrame: at least one frame (or the preface) completed in this read.
        ///     The timeout is about a frame that makes no progress, so a completed frame
        ///     restarts the clock: a pipelining client whose reads rarely end on a frame
        ///     boundary is never "stalled".
        mutating func received(at now: Int64, hasPartialFrame: Bool, completedFrame: Bool = false) {
            lastActivity = now
            if !hasPartialFrame {
                partialSince = nil
            } else if partialSince == nil || completedFrame {
                partialSince = now
            }
        }

        /// Reading resumed after a pause: a frame left incomplete waited on the server, so
        /// its partial-frame clock starts again now.
        mutating func readingResumed(at now: Int64) {
            if partialSince != nil { partialSince = now }
        }

        /// The last open call of the connection ended: idleness counts from now.
        mutating func callsEnded(at now: Int64) {
            lastActivity = max(lastActivity, now)
        }

        /// The earliest instant a timeout can expire. While reading is paused, the bytes
        /// buffered wait on the server, not on the client: no partial-frame deadline then.
        func nextDeadline(hasOpenCalls: Bool) -> Int64 {
            var deadline = hasOpenCalls ? Int64.max : lastActivity + idleTimeout
            if !readingPaused, let partialSince { deadline = min(deadline, partialSince + partialFrameTimeout) }
            return deadline
        }

        /// Decides at a check whether a timeout expired.
        /// - Returns: `.close`, or `.checkAgain` at an instant always later than `now` (a
        ///   deadline already past would make the loop's timer fire again at once, forever).
        func checkTimeouts(now: Int64, hasOpenCalls: Bool) -> TimeoutAction {
            if !readingPaused, let partialSince, now - partialSince >= partialFrameTimeout {
                return .close(
                    Status(
                        code: .deadlineExceeded,
                        message: "partial frame not completed within \(Self.seconds(partialFrameTimeout))"))
            }
            if !hasOpenCalls, now - lastActivity >= idleTimeout {
                return .close(Status(code: .unavailable, message: "idle for \(Self.seconds(idleTimeout))"))
            }
            let next = nextDeadline(hasOpenCalls: hasOpenCalls)
            // With calls open (e.g. a Watch) or reading paused, idleness is rechecked one
            // period later.
            return .checkAgain(at: next == Int64.max ? now + idleTimeout : max(next, now + 1))
        }

        /// "10 s" or "300 ms".
        static func seconds(_ milliseconds: Int64) -> String {
            milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
        }

        /// The unsent output changed (after a flush or a write completion).
        mutating func outputChanged(unsent: Int) -> OutputAction {
            if unsent >= hardUnsentOutput {
                return .close(reason: "unsent output of \(unsent) bytes reached the hard limit of \(hardUnsentOutput)")
            }
            if !readingPaused, unsent > maxUnsentOutput {
                readingPaused = true
                return .pauseReading
            }
            if readingPaused, unsent <= maxUnsentOutput / 2 {
                readingPaused = false
                return .resumeReading
            }
            return .none
        }
    }
}
