import Basics
import YAML

/// "Did you mean …" suggestions: the closest candidate by edit distance, compared case-insensitively.
enum NearMiss {
    static func best(_ text: String, in candidates: some Sequence<String>, maxDistance: Int = 2) -> String? {
        EditDistance.nearest(text, in: candidates, maxDistance: maxDistance)
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
}
