import Testing

@testable import AdLoaderMetrics

@Suite struct ExpositionFormatTests {
    private let families = [
        MetricFamily(
            name: "adloader_calls", help: "Calls \"handled\".\nSecond line \\ end", kind: .counter,
            samples: [.init([.init("method", "Borrow"), .init("code", "OK")], 3)]),
        MetricFamily(
            name: "adloader_pool_available_ads", help: "Ads ready.", kind: .gauge,
            samples: [.init([.init("loader", "de\"f\\ault\n"), .init("ad_unit", "feed")], 2.5)]),
        MetricFamily(
            name: "adloader_lag_seconds", help: "Lag.", kind: .histogram,
            samples: [
                .init(
                    histogram: HistogramSnapshot(bounds: [0.001, 0.5], cumulativeCounts: [1, 3, 4], sum: 2.0015))
            ]),
    ]

    @Test func prometheusTextNamesCountersWithTotalAndEscapesLabelValues() {
        let text = ExpositionFormat.prometheusText.render(families)
        #expect(
            text == """
                # HELP adloader_calls_total Calls "handled".\\nSecond line \\\\ end
                # TYPE adloader_calls_total counter
                adloader_calls_total{method="Borrow",code="OK"} 3
                # HELP adloader_pool_available_ads Ads ready.
                # TYPE adloader_pool_available_ads gauge
                adloader_pool_available_ads{loader="de\\"f\\\\ault\\n",ad_unit="feed"} 2.5
                # HELP adloader_lag_seconds Lag.
                # TYPE adloader_lag_seconds histogram
                adloader_lag_seconds_bucket{le="0.001"} 1
                adloader_lag_seconds_bucket{le="0.5"} 3
                adloader_lag_seconds_bucket{le="+Inf"} 4
                adloader_lag_seconds_sum 2.0015
                adloader_lag_seconds_count 4

                """)
    }

    @Test func openMetricsNamesCounterFamiliesWithoutTotalEscapesQuotesInHelpAndEndsWithEOF() {
        let text = ExpositionFormat.openMetrics.render(families)
        #expect(
            text.hasPrefix(
                "# HELP adloader_calls Calls \\\"handled\\\".\\nSecond line \\\\ end\n# TYPE adloader_calls counter\nadloader_calls_total{"
            ))
        #expect(text.hasSuffix("adloader_lag_seconds_count 4\n# EOF\n"))
        #expect(text.split(separator: "\n").filter { $0 == "# EOF" }.count == 1)
    }

    @Test(
        arguments: [
            (nil, ExpositionFormat.prometheusText),
            ("text/plain", .prometheusText),
            ("*/*", .prometheusText),
            ("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", .openMetrics),
            ("text/plain;q=0.9, Application/OpenMetrics-Text; version=0.0.1", .openMetrics),
            ("application/openmetrics-text;q=0, text/plain", .prometheusText),
            ("garbage,,;;;", .prometheusText),
        ] as [(String?, ExpositionFormat)])
    func acceptPicksTheFormat(accept: String?, expected: ExpositionFormat) {
        #expect(ExpositionFormat.negotiate(accept: accept) == expected)
    }

    @Test(arguments: [
        (0.0, "0"), (3.0, "3"), (-2.0, "-2"), (0.005, "0.005"), (2.5, "2.5"), (1e-05, "1e-05"),
        (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"), (1e300, "1e+300"),
    ])
    func numbersAreWrittenAsPrometheusParsesThem(value: Double, text: String) {
        #expect(ExpositionFormat.format(value) == text)
    }
}
