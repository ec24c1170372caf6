import Basics
import YAML

/// The promotion as a minimal edit of the Flow file's text: the losing rules' list items are removed
/// and the winner's `split` entry (or its whole `match`, when `split` was all it had); every other
/// line — comments, order, quoting — stays as written. A comment or blank line just before a
/// removed rule stays, since it may introduce the next one.
enum PromotionEdit {
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    static func apply(to text: String, file: String, winner: String, losers: [String]) throws(Refusal) -> String {
        let documents: [YAMLDocument]
        do {
            documents = try YAMLParser.parse(text, file: file)
        } catch {
            throw Refusal(description: "\(file) does not parse: \(error)")
        }
        guard let root = documents.first?.root, case .sequence(let items)? = root["rules"]?.kind else {
            throw Refusal(description: "\(file) has no rules list")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var removals: [ClosedRange<Int>] = []
        for item in items {
            guard let name = item["name"]?.scalar?.text else { continue }
            // The item's lines: its own, and every later one indented past its dash.
            let end = blockEnd(from: item.location.line, deeperThan: item.location.column - 3, lines)
            if losers.contains(name) {
                removals.append(item.location.line ... end)
            } else if name == winner {
                removals.append(try splitLines(of: item, name: name, lines: lines, file: file))
            }
        }
        let named = Set(items.compactMap { $0["name"]?.scalar?.text })
        guard named.isSuperset(of: losers + [winner]) else {
            throw Refusal(description: "\(file) does not hold every rule of the group (\(([winner] + losers).joined(separator: ", ")))")
        }
        var kept = lines
        for range in removals.sorted(by: { $0.lowerBound > $1.lowerBound }) {
            kept.removeSubrange((range.lowerBound - 1) ... (range.upperBound - 1))
        }
        return kept.joined(separator: "\n")
    }

    /// The lines of the winner's `split` entry, or of its `match` when `split` is its only condition.
    private static func splitLines(of item: YAMLNode, name: String, lines: [String], file: String) throws(Refusal) -> ClosedRange<Int> {
        guard case .mapping(let pairs) = item.kind,
              let match = pairs.first(where: { $0.key.scalar?.text == "match" }),
              case .mapping(let conditions) = match.value.kind,
              let split = conditions.first(where: { $0.key.scalar?.text == "split" }) else {
            throw Refusal(description: "\(file): rule \(name) has no match.split to remove")
        }
        if split.key.location.line == match.key.location.line {
            throw Refusal(description: "\(file):\(match.key.location.line): the match of rule \(name) is written in flow style; remove its split by hand")
        }
        let entry = conditions.count == 1 ? match : split
        return entry.key.location.line ... blockEnd(from: entry.key.location.line, deeperThan: entry.key.location.column - 1, lines)
    }

    /// The last line of the block that starts at `start`: every later line indented more than `indent`
    /// spaces belongs to it; blank and comment lines only between two that do.
    private static func blockEnd(from start: Int, deeperThan indent: Int, _ lines: [String]) -> Int {
        var last = start
        var line = start + 1
        while line <= lines.count {
            let text = lines[line - 1]
            let content = text.drop { $0 == " " }
            if !content.isEmpty, !content.hasPrefix("#") {
                guard text.count - content.count > indent else { break }
                last = line
            }
            line += 1
        }
        return last
    }
}
