import AdLoaderService
import AdLoaderWire

/// The graceful shutdown over every transport, in two phases: announce on all (calls still
/// served), then — once each transport said its clients know — the service drains and every
/// transport drains; once each is drained the parts stop.
///
/// The transports are a list: a third one joins the sequence by being in it.
///
/// - Important: loop-confined.
final class ShutdownSequence {
    /// The phases, one mutating method per event, each returning what to do.
    struct StateMachine: Equatable {
        enum State: Equatable {
            case running
            /// Waiting for these transports (indices) to report their clients know.
            case announcing(waiting: Set<Int>)
            /// Waiting for these transports to close their last connection.
            case draining(waiting: Set<Int>)
            case drained
        }

        enum Action: Equatable {
            case none
            case announce
            /// Drain the service, then every transport.
            case drain
            /// Every transport drained: stop the parts.
            case stop
        }

        private(set) var state = State.running
        let transportCount: Int

        init(transportCount: Int) { self.transportCount = transportCount }

        mutating func begin() -> Action {
            guard state == .running else { return .none }
            state = .announcing(waiting: Set(0..<transportCount))
            return .announce
        }

        /// All announced, with no transport: drains at once.
        mutating func announceStarted() -> Action {
            guard case .announcing(let waiting) = state, waiting.isEmpty else { return .none }
            return startDrain()
        }

        mutating func announced(_ index: Int) -> Action {
            guard case .announcing(var waiting) = state, waiting.remove(index) != nil else { return .none }
            state = .announcing(waiting: waiting)
            return waiting.isEmpty ? startDrain() : .none
        }

        private mutating func startDrain() -> Action {
            state = .draining(waiting: Set(0..<transportCount))
            return .drain
        }

        mutating func drainStarted() -> Action {
            guard case .draining(let waiting) = state, waiting.isEmpty else { return .none }
            state = .drained
            return .stop
        }

        mutating func drained(_ index: Int) -> Action {
            guard case .draining(var waiting) = state, waiting.remove(index) != nil else { return .none }
            state = .draining(waiting: waiting)
            guard waiting.isEmpty else { return .none }
            state = .drained
            return .stop
        }
    }

    private let transports: [any ServerTransport]
    private var machine: StateMachine
    /// The service's drain, run between the phases.
    private let drainService: () -> Void
    /// Every transport drained.
    private let stop: () -> Void
    private let status: Status
    private let gracePeriod: Duration
    private let announceLimit: Duration
    /// The grace period left when the drain phase starts.
    private let remainingGrace: () -> Duration

    init(
        transports: [any ServerTransport], status: Status, gracePeriod: Duration, announceLimit: Duration,
        remainingGrace: @escaping () -> Duration, drainService: @escaping () -> Void, stop: @escaping () -> Void
    ) {
        self.transports = transports
        self.machine = StateMachine(transportCount: transports.count)
        self.status = status
        self.gracePeriod = gracePeriod
        self.announceLimit = announceLimit
        self.remainingGrace = remainingGrace
        self.drainService = drainService
        self.stop = stop
    }

    var state: StateMachine.State { machine.state }

    func begin() {
        run(machine.begin())
    }

    private func run(_ action: StateMachine.Action) {
        switch action {
        case .none:
            break
        case .announce:
            for (index, transport) in transports.enumerated() {
                transport.announceShutdown(status: status, gracePeriod: gracePeriod, announceLimit: announceLimit) {
                    [unowned self] in self.run(self.machine.announced(index))
                }
            }
            run(machine.announceStarted())
        case .drain:
            drainService()
            let left = max(remainingGrace(), .zero)
            for (index, transport) in transports.enumerated() {
                transport.drain(status: status, gracePeriod: left) { [unowned self] in
                    self.run(self.machine.drained(index))
                }
            }
            run(machine.drainStarted())
        case .stop:
            stop()
        }
    }
}
