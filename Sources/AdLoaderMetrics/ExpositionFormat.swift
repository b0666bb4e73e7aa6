/// The two formats `/metrics` speaks: Prometheus text 0.0.4 and OpenMetrics 1.0.0, picked by
/// the scraper's `Accept` header.
///
/// Differences handled here: OpenMetrics ends with `# EOF`, escapes `"` in HELP too, and
/// names a counter family without `_total` in its TYPE and HELP lines (its samples carry it);
/// the Prometheus text format names the family as its samples (`..._total`).
public enum ExpositionFormat: Hashable, Sendable {
    case prometheusText
    case openMetrics

    public var contentType: String {
        switch self {
        case .prometheusText: "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// OpenMetrics when `accept` lists `application/openmetrics-text` (Prometheus asks for it
    /// first), else the Prometheus text format.
    public static func negotiate(accept: String?) -> ExpositionFormat {
        guard let accept else { return .prometheusText }
        for part in accept.split(separator: ",") {
            let mediaType = part.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
            if mediaType == "application/openmetrics-text" {
                // A q=0 entry refuses it.
                if part.replacingSpaces().contains(";q=0") && !part.replacingSpaces().contains(";q=0.") { continue }
                return .openMetrics
            }
        }
        return .prometheusText
    }

    /// Writes `families` in this format.
    public func render(_ families: [MetricFamily]) -> String {
        var out = ""
        out.reserveCapacity(families.count * 256)
        for family in families {
            let familyName = self == .prometheusText && family.kind == .counter ? family.name + "_total" : family.name
            out += "# HELP \(familyName) \(escapeHelp(family.help))\n"
            out += "# TYPE \(familyName) \(typeName(family.kind))\n"
            for sample in family.samples {
                switch sample.value {
                case .number(let value):
                    let name = family.kind == .counter ? family.name + "_total" : family.name
                    out += "\(name)\(labels(sample.labels)) \(Self.format(value))\n"
                case .histogram(let histogram):
                    for (index, count) in histogram.cumulativeCounts.enumerated() {
                        let bound = index < histogram.bounds.count ? Self.format(histogram.bounds[index]) : "+Inf"
                        let le = sample.labels + [MetricFamily.Label("le", bound)]
                        out += "\(family.name)_bucket\(labels(le)) \(count)\n"
                    }
                    out += "\(family.name)_sum\(labels(sample.labels)) \(Self.format(histogram.sum))\n"
                    out += "\(family.name)_count\(labels(sample.labels)) \(histogram.count)\n"
                }
            }
        }
        if self == .openMetrics { out += "# EOF\n" }
        return out
    }

    private func typeName(_ kind: MetricFamily.Kind) -> String {
        switch kind {
        case .counter: "counter"
        case .gauge: "gauge"
        case .histogram: "histogram"
        }
    }

    private func labels(_ labels: [MetricFamily.Label]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.name)=\"\(Self.escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
    }

    private func escapeHelp(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where self == .openMetrics: out += "\\\""
            default: out.append(character)
            }
        }
        return out
    }

    /// Label values escape backslash, double quote and line feed (both formats).
    public static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// Integers without a fraction, other numbers as Swift prints them (`0.005`, `1e-05`),
    /// `+Inf`, `-Inf`, `NaN`.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return value.description
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }

    fileprivate func replacingSpaces() -> String { String(filter { $0 != " " && $0 != "\t" }) }
}
