/// One metric family as scraped: a name, help, type and its samples. Built at scrape time
/// by whoever owns the values; ``ExpositionFormat`` writes a list of them.
public struct MetricFamily: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Only goes up (resets at restart). The name excludes `_total`; the sample adds it.
        case counter
        /// Goes up and down.
        case gauge
        /// Observations counted in fixed buckets, with their sum and count.
        case histogram
    }

    /// One sample: label pairs in a fixed order and a value (or, for histograms, a snapshot).
    public struct Sample: Hashable, Sendable {
        public var labels: [Label]
        public var value: Value

        public init(_ labels: [Label] = [], _ value: Double) {
            self.labels = labels
            self.value = .number(value)
        }

        public init(_ labels: [Label] = [], histogram: HistogramSnapshot) {
            self.labels = labels
            self.value = .histogram(histogram)
        }
    }

    public enum Value: Hashable, Sendable {
        case number(Double)
        case histogram(HistogramSnapshot)
    }

    /// A label name and value; names are fixed by the code, values may come from clients'
    /// configuration (loader and ad unit names) and are escaped when written.
    public struct Label: Hashable, Sendable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The family's name: for counters without the `_total` suffix the samples carry.
    public var name: String
    public var help: String
    public var kind: Kind
    public var samples: [Sample]

    public init(name: String, help: String, kind: Kind, samples: [Sample]) {
        precondition(kind != .counter || !name.hasSuffix("_total"), "counter family names exclude _total")
        self.name = name
        self.help = help
        self.kind = kind
        self.samples = samples
    }
}
