/// Levenshtein distance over characters, case-insensitively so `Header` suggests `header`:
/// the measure behind every "did you mean …" hint, for YAML keys and manifest names alike.
public enum EditDistance {
    /// The closest candidate within `maxDistance` edits (never an exact match, never one that would
    /// replace the whole word); ties go to the alphabetically first, so hints are deterministic.
    public static func nearest(_ text: String, in candidates: some Sequence<String>, maxDistance: Int = 2) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != text {
            let distance = between(text, candidate)
            guard distance <= maxDistance, distance < max(text.count, candidate.count) else { continue }
            if best == nil || distance < best!.distance || (distance == best!.distance && candidate < best!.candidate) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    public static func between(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.lowercased()), b = Array(rhs.lowercased())
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
