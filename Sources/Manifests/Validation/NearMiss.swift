/// "Did you mean …" suggestions: the closest candidate by edit distance, compared case-insensitively.
enum NearMiss {
    static func best(_ text: String, in candidates: some Sequence<String>, maxDistance: Int = 2) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != text {
            let distance = editDistance(text, candidate)
            guard distance <= maxDistance, distance < max(text.count, candidate.count) else { continue }
            if best == nil || distance < best!.distance || (distance == best!.distance && candidate < best!.candidate) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// The hint for a name that resolves to nothing: a near miss, or the names that exist.
    static func hint(for text: String, in candidates: [String], noun: String) -> String {
        if let suggestion = best(text, in: candidates, maxDistance: distance(for: text)) {
            return "did you mean '\(suggestion)'?"
        }
        if candidates.isEmpty { return "no \(noun) is declared" }
        let shown = candidates.prefix(8).joined(separator: ", ")
        return "declared \(noun)s: \(shown)\(candidates.count > 8 ? ", …" : "")"
    }

    /// How far a name may be from a candidate and still be a likely typo of it. Two edits: long
    /// ids share long prefixes, so a larger allowance suggests unrelated products (weekly → yearly).
    static func distance(for text: String) -> Int { 2 }

    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.lowercased().unicodeScalars), b = Array(rhs.lowercased().unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
