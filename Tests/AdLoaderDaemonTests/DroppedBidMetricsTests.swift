import AdLoaderCore
import AdLoaderMetrics
import AdLoaderOpenRTB
import AdLoaderOperations
import Testing

/// `adloader_source_bids_dropped_total{source,reason}`: one series per source and reason, from
/// the counts the source keeps, in both exposition formats.
@Suite struct DroppedBidMetricsTests {
    private func stats(_ counts: [Int: UInt64]) -> DemandSourceStats {
        var stats = DemandSourceStats()
        for code in LossReason.droppedBidCodes { stats.bidsDroppedByReason[LossReason.metricLabel(for: code)] = 0 }
        for (code, count) in counts {
            stats.bidsDroppedByReason[LossReason.metricLabel(for: code), default: 0] += count
        }
        return stats
    }

    @Test func eachSourceGetsOneSeriesPerReasonSortedWithItsCount() {
        let family = DaemonMetrics.droppedBidsFamily([
            (name: "rtb", stats: stats([LossReason.lostToHigherBid: 2, LossReason.missingMarkup: 1])),
            (name: "zero", stats: stats([:])),
        ])
        let text = ExpositionFormat.prometheusText.render([family])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("# HELP adloader_source_bids_dropped_total Bids dropped") == true)
        #expect(lines.dropFirst().first == "# TYPE adloader_source_bids_dropped_total counter")
        #expect(
            Array(lines.dropFirst(2)) == [
                #"adloader_source_bids_dropped_total{source="rtb",reason="below_floor"} 0"#,
                #"adloader_source_bids_dropped_total{source="rtb",reason="invalid_bid"} 0"#,
                #"adloader_source_bids_dropped_total{source="rtb",reason="missing_markup"} 1"#,
                #"adloader_source_bids_dropped_total{source="rtb",reason="missing_price"} 0"#,
                #"adloader_source_bids_dropped_total{source="rtb",reason="outbid"} 2"#,
                #"adloader_source_bids_dropped_total{source="rtb",reason="wrong_format"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="below_floor"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="invalid_bid"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="missing_markup"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="missing_price"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="outbid"} 0"#,
                #"adloader_source_bids_dropped_total{source="zero",reason="wrong_format"} 0"#,
            ])
        let open = ExpositionFormat.openMetrics.render([family])
        #expect(open.hasPrefix("# HELP adloader_source_bids_dropped Bids dropped"))
        #expect(open.contains("\n# TYPE adloader_source_bids_dropped counter\n"))
        #expect(open.contains(#"adloader_source_bids_dropped_total{source="rtb",reason="outbid"} 2"#))
    }

    @Test func aCodeNoDroppedBidGetsIsOtherAndEveryListedCodeHasItsOwnName() {
        #expect(LossReason.metricLabel(for: 1) == "other")
        let names = LossReason.droppedBidCodes.map(LossReason.metricLabel(for:))
        #expect(Set(names).count == names.count && !names.contains("other"))
    }
}
