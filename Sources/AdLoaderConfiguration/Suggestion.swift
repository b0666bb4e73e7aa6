/// "Did you mean" for a misspelt configuration key, section or flag: the known name closest
/// to what was written, when it is close enough to be the likely intent.
package enum Suggestion {
    /// ` (did you mean "x"?)` for the candidate nearest `name`, or an empty string when none is
    /// near: at most one edit per three characters (at least one, at most three), case ignored,
    /// a swap of two neighbours counting as one edit.
    package static func didYouMean(_ name: String, among candidates: [String]) -> String {
        guard let best = nearest(name, among: candidates) else { return "" }
        return " (did you mean \"\(best)\"?)"
    }

    /// The candidate nearest `name` within the bound of ``didYouMean(_:among:)``, if any; ties go
    /// to the earlier candidate.
    package static func nearest(_ name: String, among candidates: [String]) -> String? {
        let written = Array(name.lowercased().unicodeScalars)
        let bound = max(1, min(3, written.count / 3))
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let other = Array(candidate.lowercased().unicodeScalars)
            // Lengths further apart than the bound are further apart in edits too: a long
            // misspelt name costs a length check per candidate, not a quadratic table.
            guard abs(other.count - written.count) <= bound else { continue }
            let distance = editDistance(written, other)
            if distance <= bound, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// adjacent characters each cost one.
    package static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, previous2[j - 2] + 1) }
                current[j] = value
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
