import Basics
import Foundation
import YAML

/// The promotion as a minimal edit of the Flow file's text: the losing rules' list items are removed
/// and the winner's `split` entry (or its whole `match`, when `split` was all it had); every other
/// line — comments, order, quoting — stays as written. A comment or blank line just before a
/// removed rule stays, since it may introduce the next one.
enum PromotionEdit {
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    static func apply(to text: String, file: String, winner: String, losers: [String], winnerPercent: Double? = nil,
                      endedGroup: String? = nil) throws(Refusal) -> String {
        let documents: [YAMLDocument]
        do {
            documents = try YAMLParser.parse(text, file: file)
        } catch {
            throw Refusal(description: "\(file) does not parse: \(error)")
        }
        guard let root = documents.first?.root, case .sequence(let items)? = root["rules"]?.kind else {
            throw Refusal(description: "\(file) has no rules list")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var removals: [ClosedRange<Int>] = []
        for item in items {
            guard let name = item["name"]?.scalar?.text else { continue }
            // The item's lines: its own, and every later one indented past its dash.
            let end = blockEnd(from: item.location.line, deeperThan: item.location.column - 3, lines)
            if losers.contains(name) {
                removals.append(item.location.line ... end)
            } else if name == winner, let winnerPercent {
                try setPercent(of: item, to: winnerPercent, name: name, lines: &lines, file: file)
            } else if name == winner {
                removals.append(try splitLines(of: item, name: name, lines: lines, file: file))
            }
        }
        let named = Set(items.compactMap { $0["name"]?.scalar?.text })
        guard named.isSuperset(of: losers + [winner]) else {
            throw Refusal(description: "\(file) does not hold every rule of the group (\(([winner] + losers).joined(separator: ", ")))")
        }
        if let endedGroup { removals += guardrailLines(of: endedGroup, root: root, lines: lines) }
        var kept = lines
        for range in removals.sorted(by: { $0.lowerBound > $1.lowerBound }) {
            kept.removeSubrange((range.lowerBound - 1) ... (range.upperBound - 1))
        }
        return kept.joined(separator: "\n")
    }

    /// The guardrails of a group that ends: their items, or the whole `guardrails:` when no other is left.
    private static func guardrailLines(of group: String, root: YAMLNode, lines: [String]) -> [ClosedRange<Int>] {
        guard case .mapping(let pairs) = root.kind, let key = pairs.first(where: { $0.key.scalar?.text == "guardrails" }),
              case .sequence(let items) = key.value.kind else { return [] }
        let blocks = items.map { item in
            (group: item["group"]?.scalar?.text, lines: item.location.line ... blockEnd(from: item.location.line, deeperThan: item.location.column - 3, lines))
        }
        let ending = blocks.filter { $0.group == group }
        guard !ending.isEmpty else { return [] }
        if ending.count == blocks.count, let last = blocks.map(\.lines.upperBound).max() {
            return [key.key.location.line ... last]
        }
        return ending.map(\.lines)
    }

    /// Writes `percent` over the value of the rule's `match.split.percent`, in place.
    private static func setPercent(of item: YAMLNode, to percent: Double, name: String, lines: inout [String], file: String) throws(Refusal) {
        guard let value = item["match"]?["split"]?["percent"], value.scalar != nil,
              value.location.line >= 1, value.location.line <= lines.count else {
            throw Refusal(description: "\(file): rule \(name) has no match.split.percent to change")
        }
        var line = Array(lines[value.location.line - 1])
        let start = value.location.column - 1
        var end = start
        while end < line.count, line[end].isNumber || line[end] == "." { end += 1 }
        guard start < line.count, end > start else { throw Refusal(description: "\(file):\(value.location.line): cannot find the percent of rule \(name)") }
        let text = percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
        line.replaceSubrange(start ..< end, with: Array(text))
        lines[value.location.line - 1] = String(line)
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
