package import AdLoaderMetrics
package import AdLoaderService
import AdLoaderUV
package import AdLoaderWire

/// The service's ``CallObserver``: calls by (method, status code) and call latency per method,
/// in flat tables indexed by ``ServiceMethod`` and `Status.Code.rawValue` (no hashing per call).
///
/// Latency is measured with the monotonic nanosecond clock from the call's arrival to its
/// final answer; for a parked Borrow or a Watch that includes the time it stayed open.
///
/// - Important: loop-confined.
package final class CallMetrics: CallObserver {
    private static let codeCount = Status.Code.all.count
    /// `counts[method.rawValue * codeCount + code.rawValue]`; the last row counts refused
    /// calls of unknown methods.
    private var counts: [UInt64]
    /// The `method` label of calls to a method the service does not serve.
    package static let unknownMethod = "_unknown"
    private static let unknownRow = ServiceMethod.allCases.count
    package let latency: [Histogram]

    package init() {
        counts = Array(repeating: 0, count: (ServiceMethod.allCases.count + 1) * Self.codeCount)
        latency = ServiceMethod.allCases.map { _ in Histogram(bounds: Histogram.latencySeconds) }
    }

    package func callStarted() -> UInt64 { UVLoop.highResolutionNanoseconds }

    package func callFinished(_ method: ServiceMethod, code: Status.Code, startedAt: UInt64) {
        counts[method.rawValue * Self.codeCount + code.rawValue] &+= 1
        latency[method.rawValue].observe(Double(UVLoop.highResolutionNanoseconds &- startedAt) / 1e9)
    }

    package func callRefused(_ method: ServiceMethod?, code: Status.Code) {
        counts[(method?.rawValue ?? Self.unknownRow) * Self.codeCount + code.rawValue] &+= 1
    }

    /// Calls of `method` that ended with `code`.
    package func count(_ method: ServiceMethod, _ code: Status.Code) -> UInt64 {
        counts[method.rawValue * Self.codeCount + code.rawValue]
    }

    /// Calls of every method and status.
    package var total: UInt64 { counts.reduce(0, &+) }

    /// Calls of every method by status, indexed by `Status.Code.rawValue`.
    package var totalsByCode: [UInt64] {
        var totals = [UInt64](repeating: 0, count: Self.codeCount)
        for (index, count) in counts.enumerated() { totals[index % Self.codeCount] &+= count }
        return totals
    }

    /// Latency of the unary methods together (Watch streams are open as long as the client
    /// likes, so they would drown the quantiles).
    package var unaryLatency: HistogramSnapshot {
        var total = latency[ServiceMethod.prefetch.rawValue].snapshot
        for method in ServiceMethod.allCases where method != .watch && method != .prefetch {
            total = total.adding(latency[method.rawValue].snapshot)
        }
        return total
    }

    /// `adloader_calls_total` and `adloader_call_duration_seconds`. Every method has its OK
    /// series from the start; other codes appear once they happened (at most 6 x 17 series:
    /// refused calls of unknown methods are counted as `_unknown`; refused calls are not timed).
    package func families() -> [MetricFamily] {
        var calls: [MetricFamily.Sample] = []
        var durations: [MetricFamily.Sample] = []
        for method in ServiceMethod.allCases {
            for code in Status.Code.all {
                let value = count(method, code)
                if value > 0 || code == .ok {
                    calls.append(.init([.init("method", method.name), .init("code", code.description)], Double(value)))
                }
            }
            durations.append(.init([.init("method", method.name)], histogram: latency[method.rawValue].snapshot))
        }
        for code in Status.Code.all {
            let value = counts[Self.unknownRow * Self.codeCount + code.rawValue]
            if value > 0 {
                calls.append(
                    .init([.init("method", Self.unknownMethod), .init("code", code.description)], Double(value)))
            }
        }
        return [
            MetricFamily(
                name: "adloader_calls", help: "Calls handled, by method and final gRPC status code (both transports).",
                kind: .counter, samples: calls),
            MetricFamily(
                name: "adloader_call_duration_seconds",
                help: "Time from a call's arrival to its final answer, by method (parked borrows include the wait).",
                kind: .histogram, samples: durations),
        ]
    }
}
