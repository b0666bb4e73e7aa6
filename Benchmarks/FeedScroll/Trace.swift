import AdLoaderCore

/// How simulated users scroll; every strategy replays the same trace built from these.
struct TraceParameters {
    /// Users arriving over `duration` (a Poisson process of constant rate: steady traffic).
    var users = 50_000
    /// Seconds of arrivals; sessions that started run to their end.
    var duration = 7_200.0
    var seed: UInt64 = 1
    /// An ad every `adEvery` cells: cells k-1, 2k-1, ... (0-based) are ad cells.
    var adEvery = 5
    /// Cells on screen at once.
    var viewport = 3
    /// An ad cell further than this many cells from the screen is released by the feed
    /// (its cell state dropped; a later appearance is a new cell with a new ad).
    var releaseDistance = 10
    /// Gestures per session: log-normal.
    var gesturesMedian = 30.0
    var gesturesSigma = 0.9
    /// Pause after a gesture, milliseconds: log-normal (reading a cell).
    var dwellMedian = 1_500.0
    var dwellSigma = 1.0
    /// Share of gestures that are flings (several cells at 60 ms each) and scroll-backs.
    var flingProbability = 0.15
    var backProbability = 0.12

    /// Ramp scenario: arrivals run at `rampFactor` times the base rate between
    /// `rampStart + rampRise` and `rampEnd - rampRise`, rising and falling linearly over
    /// `rampRise` seconds on each side; 1 = steady traffic.
    var rampFactor = 1.0
    var rampStart = 0.0
    var rampEnd = 0.0
    var rampRise = 600.0
    /// Ad units users are spread over, Zipf-distributed (exponent 1): user of rank k's
    /// unit is drawn with weight 1/k. 1 = everyone on one unit.
    var adUnits = 1
    /// Sessions starting at or after this many seconds draw their unit by reversed rank (the
    /// least popular unit becomes the most popular): the popular units of before go idle.
    var unitShiftAt: Double?
    /// Also emit a ``TraceEvent/Kind/scroll`` event at each session start and move (the plan
    /// mode needs the viewport; the other strategies ignore them, so the ad-cell events are
    /// the same with or without).
    var scrolls = false

    static let smoke = TraceParameters(users: 150, duration: 600)

    /// The arrival rate multiplier at `seconds`.
    func rateFactor(at seconds: Double) -> Double {
        guard rampFactor != 1, seconds > rampStart, seconds < rampEnd else { return 1 }
        let up = min(1, (seconds - rampStart) / rampRise)
        let down = min(1, (rampEnd - seconds) / rampRise)
        return 1 + (rampFactor - 1) * min(up, down)
    }
}

/// One change of an ad cell of one user, in virtual milliseconds since the start.
struct TraceEvent {
    enum Kind: UInt8 {
        /// The ad cell scrolled into view (created or recreated).
        case appear
        /// It scrolled out of view (the cell view is destroyed; the feed keeps its state).
        case disappear
        /// It is far from the screen or the session ended: the feed drops its state.
        case release
        /// The viewport moved (or the session started): `cell` is its first visible cell.
        case scroll
    }

    var time: Int64
    var user: Int32
    var cell: Int32
    var kind: Kind
    /// The user's ad unit (0 unless the trace spreads users over several).
    var unit: Int32 = 0
}

/// Every ad-cell event of every user, in time order (ties keep each user's own order).
struct Trace {
    let parameters: TraceParameters
    let events: [TraceEvent]
    let sessions: Int
    let cellsScrolled: Int
    let endTime: Int64

    init(_ parameters: TraceParameters) {
        self.parameters = parameters
        var arrivals = SplitMix64(seed: parameters.seed)
        var collected: [(event: TraceEvent, sequence: Int)] = []
        var cellsScrolled = 0
        var time = 0.0
        let meanGap = parameters.duration * 1_000 / Double(max(parameters.users, 1))
        // Zipf weights 1/k over the ad units, as a cumulative table.
        var cumulative: [Double] = []
        var total = 0.0
        for rank in 1...max(parameters.adUnits, 1) {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        var user = 0
        while true {
            time += arrivals.exponential(mean: meanGap / parameters.rateFactor(at: time / 1_000))
            if time >= parameters.duration * 1_000 { break }
            // Steady traffic: exactly as many users as asked (the traces of earlier runs).
            if parameters.rampFactor == 1 && user >= parameters.users { break }
            var generator = SplitMix64(seed: parameters.seed &* 0x1000_0000_01B3 ^ UInt64(user))
            var session = Session(user: Int32(user), start: Int64(time), parameters: parameters)
            if parameters.adUnits > 1 {
                let draw = generator.unit() * total
                session.unit = Int32(cumulative.firstIndex { $0 >= draw } ?? parameters.adUnits - 1)
                if let shift = parameters.unitShiftAt, time >= shift * 1_000 {
                    session.unit = Int32(parameters.adUnits - 1) - session.unit
                }
            }
            user += 1
            session.run(&generator)
            cellsScrolled += session.moves
            for event in session.events {
                collected.append((event, collected.count))
            }
        }
        collected.sort { ($0.event.time, $0.sequence) < ($1.event.time, $1.sequence) }
        self.events = collected.map(\.event)
        self.sessions = Set(events.map(\.user)).count
        self.cellsScrolled = cellsScrolled
        self.endTime = events.last?.time ?? 0
    }
}

/// One user's session: a viewport moving over the feed, emitting ad-cell events.
private struct Session {
    let user: Int32
    let parameters: TraceParameters
    var time: Int64
    var top = 0
    var moves = 0
    /// Ad cells that appeared and were not released yet.
    var held: Set<Int> = []
    var unit: Int32 = 0
    var events: [TraceEvent] = []

    init(user: Int32, start: Int64, parameters: TraceParameters) {
        self.user = user
        self.time = start
        self.parameters = parameters
    }

    func isAdCell(_ cell: Int) -> Bool { cell % parameters.adEvery == parameters.adEvery - 1 }
    var visible: Range<Int> { top..<(top + parameters.viewport) }

    mutating func emit(_ kind: TraceEvent.Kind, _ cell: Int) {
        events.append(TraceEvent(time: time, user: user, cell: Int32(cell), kind: kind, unit: unit))
    }

    mutating func run(_ generator: inout SplitMix64) {
        if parameters.scrolls { emit(.scroll, top) }
        for cell in visible where isAdCell(cell) { appear(cell) }
        let gestures = max(
            1, Int(generator.logNormal(median: parameters.gesturesMedian, sigma: parameters.gesturesSigma)))
        for _ in 0..<gestures {
            let draw = generator.unit()
            if draw < parameters.flingProbability {
                for _ in 0..<generator.integer(in: 3...12) { move(by: 1, after: 60) }
            } else if draw < parameters.flingProbability + parameters.backProbability && top > 0 {
                for _ in 0..<generator.integer(in: 1...6) where top > 0 { move(by: -1, after: 150) }
            } else {
                move(by: 1, after: 250)
            }
            time += Int64(generator.logNormal(median: parameters.dwellMedian, sigma: parameters.dwellSigma))
        }
        for cell in visible where isAdCell(cell) { emit(.disappear, cell) }
        for cell in held.sorted() { emit(.release, cell) }
    }

    mutating func appear(_ cell: Int) {
        held.insert(cell)
        emit(.appear, cell)
    }

    /// Scrolls one cell, taking `duration` milliseconds.
    mutating func move(by delta: Int, after duration: Int64) {
        time += duration
        moves += 1
        let leaving = delta > 0 ? top : top + parameters.viewport - 1
        top += delta
        if parameters.scrolls { emit(.scroll, top) }
        let entering = delta > 0 ? top + parameters.viewport - 1 : top
        if isAdCell(leaving) { emit(.disappear, leaving) }
        if isAdCell(entering) { appear(entering) }
        for cell in held.sorted() where !visible.contains(cell) && distance(cell) > parameters.releaseDistance {
            held.remove(cell)
            emit(.release, cell)
        }
    }

    func distance(_ cell: Int) -> Int {
        cell < top ? top - cell : cell - (top + parameters.viewport - 1)
    }
}
