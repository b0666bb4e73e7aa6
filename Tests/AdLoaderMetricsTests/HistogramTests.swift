import Testing

@testable import AdLoaderMetrics

@Suite struct HistogramTests {
    @Test func observationsLandInTheFirstBucketWhoseBoundIsNotBelowThem() {
        let histogram = Histogram(bounds: [1, 2, 5])
        for value in [0.0, 1, 1.5, 2, 4.9, 5, 5.1, 1e9, -3] { histogram.observe(value) }
        histogram.observe(.nan)  // ignored
        let snapshot = histogram.snapshot
        // <=1: 0, 1, -3; <=2: +1.5, 2; <=5: +4.9, 5; +Inf: +5.1, 1e9.
        #expect(snapshot.cumulativeCounts == [3, 5, 7, 9])
        #expect(snapshot.count == 9)
        #expect(snapshot.sum == 0 + 1 + 1.5 + 2 + 4.9 + 5 + 5.1 + 1e9 - 3)
    }

    @Test func quantilesInterpolateInsideTheirBucketLikeHistogramQuantile() {
        let histogram = Histogram(bounds: [0.1, 0.2, 0.4])
        for _ in 0..<50 { histogram.observe(0.05) }
        for _ in 0..<50 { histogram.observe(0.3) }
        let snapshot = histogram.snapshot
        #expect(snapshot.quantile(0.5) == 0.1)
        #expect(abs(snapshot.quantile(0.99)! - 0.396) < 1e-9)
        #expect(Histogram(bounds: [1]).snapshot.quantile(0.5) == nil)
        let above = Histogram(bounds: [1])
        above.observe(10)
        #expect(above.snapshot.quantile(0.99) == 1)
    }

    @Test func snapshotsSubtractToTheObservationsBetweenThem() {
        let histogram = Histogram(bounds: Histogram.latencySeconds)
        histogram.observe(0.003)
        let before = histogram.snapshot
        histogram.observe(0.2)
        histogram.observe(20)
        let delta = histogram.snapshot.subtracting(before)
        #expect(delta.count == 2)
        #expect(delta.cumulativeCounts.first == 0)
        #expect(abs(delta.sum - 20.2) < 1e-9)
        #expect(delta.adding(before).count == 3)
    }
}
