import Basics
import Foundation
import Manifests
import Reconciler
import YAML

/// Writes defaults that drifted at Apple (a vendor or a person changed them) into the `Defaults`
/// entries that assign them, as Apple now holds them (`import --accept-drift`): an entry written on
/// one line as import writes them, `- { products: [...], locales: [...], message: NAME }`, that
/// assigns a drifted pair is replaced by entries for exactly its pairs, the drifted ones naming
/// Apple's message; every other line stays as written. An entry written otherwise (over several
/// lines, or with `"*"`) is left as it is, and the change is returned as refused, with why. The
/// edited text must parse to the file's assignments with only the drifted ones changed, or nothing
/// in that file is edited.
enum DefaultsDriftEdit {
    struct Change: Hashable {
        var pair: ProductLocale
        /// The message the entry names now, and the one Apple shows.
        var from: String
        var to: String
    }

    struct Result {
        var text: String
        var done: [Change] = []
        var refused: [(change: Change, reason: String)] = []
    }

    /// One entry of a `defaults:` list, as written.
    struct Entry {
        var line: Int
        var products: [String]
        var locales: [String]
        var message: String
        /// Written on its own line as a flow mapping with explicit lists: an entry this edit may rewrite.
        var rewritable: Bool
    }

    static func apply(_ changes: [Change], to text: String, file: String) -> Result {
        var result = Result(text: text)
        guard let documents = try? YAMLParser.parse(text, file: file) else {
            result.refused = changes.map { ($0, "\(file) does not parse") }
            return result
        }
        var lines = text.components(separatedBy: "\n")
        let entries = documents.flatMap { entriesOf($0, lines: lines) }
        var byLine: [Int: [Change]] = [:]
        for change in changes {
            guard let entry = entries.first(where: { $0.message == change.from && covers($0, change.pair) }) else {
                result.refused.append((change, "no entry of \(file) assigns \(change.from) to \(change.pair)"))
                continue
            }
            guard entry.rewritable else {
                result.refused.append((change, "\(file):\(entry.line) is not written on one line with explicit products and locales"))
                continue
            }
            byLine[entry.line, default: []].append(change)
        }
        // Bottom up, so earlier line numbers stay valid.
        for (line, changes) in byLine.sorted(by: { $0.key > $1.key }) {
            guard let entry = entries.first(where: { $0.line == line }) else { continue }
            lines.replaceSubrange((line - 1)...(line - 1), with: rewritten(entry, changes, line: lines[line - 1]))
            result.done += changes
        }
        let edited = lines.joined(separator: "\n")
        guard !result.done.isEmpty else { return result }
        guard readsBack(edited, as: documents, with: result.done, file: file) else {
            result.refused += result.done.map { ($0, "the edited \(file) would not read back with only these defaults changed") }
            result.done = []
            return result
        }
        result.text = edited
        return result
    }

    static func covers(_ entry: Entry, _ pair: ProductLocale) -> Bool {
        (entry.products.contains("*") || entry.products.contains(pair.productId)) && (entry.locales.contains("*") || entry.locales.contains(pair.locale))
    }

    static func entriesOf(_ document: YAMLDocument, lines: [String]) -> [Entry] {
        guard document.root["kind"]?.scalar?.text == "Defaults", case .sequence(let items)? = document.root["defaults"]?.kind else { return [] }
        return items.compactMap { item in
            guard let message = item["message"]?.scalar?.text, let products = item["products"], let locales = item["locales"] else { return nil }
            let line = item.location.line
            let text = lines.indices.contains(line - 1) ? lines[line - 1].trimmingCharacters(in: .whitespaces) : ""
            let explicit = [products, locales].allSatisfy { if case .sequence = $0.kind { return true } else { return false } }
            let values = { (node: YAMLNode) -> [String] in
                if case .sequence(let values) = node.kind { return values.compactMap(\.scalar?.text) }
                return [node.scalar?.text ?? ""]
            }
            let oneLine = text.hasPrefix("- {") && text.hasSuffix("}") && items.filter { $0.location.line == line }.count == 1
            return Entry(line: line, products: values(products), locales: values(locales), message: message, rewritable: explicit && oneLine)
        }
    }

    /// The entry's pairs, the changed ones naming Apple's message, as few one-line entries as say them.
    static func rewritten(_ entry: Entry, _ changes: [Change], line: String) -> [String] {
        let to = Dictionary(changes.map { ($0.pair, $0.to) }, uniquingKeysWith: { first, _ in first })
        let assignments = entry.products.flatMap { product in
            entry.locales.map { locale in
                let pair = ProductLocale(productId: product, locale: locale)
                return ImportPlan.Default(pair: pair, message: to[pair] ?? entry.message)
            }
        }
        let indent = String(line.prefix { $0 == " " })
        let cr = line.hasSuffix("\r") ? "\r" : ""
        return ImportPlan.grouped(assignments).map {
            indent + "- { products: [\($0.products.joined(separator: ", "))], locales: [\($0.locales.joined(separator: ", "))], message: \($0.message) }" + cr
        }
    }

    /// Every (product, locale, message) the file's `Defaults` entries say, as written ("*" kept).
    static func assignments(_ documents: [YAMLDocument]) -> [String] {
        documents.flatMap { document in
            entriesOf(document, lines: []).flatMap { entry in
                entry.products.flatMap { product in entry.locales.map { "\(product)|\($0)|\(entry.message)" } }
            }
        }.sorted()
    }

    static func readsBack(_ edited: String, as original: [YAMLDocument], with changes: [Change], file: String) -> Bool {
        guard let documents = try? YAMLParser.parse(edited, file: file), documents.count == original.count else { return false }
        for (index, document) in documents.enumerated() where document.root["kind"]?.scalar?.text != "Defaults" {
            guard original[index].root["kind"]?.scalar?.text != "Defaults" else { return false }
        }
        var expected = assignments(original)
        for change in changes {
            guard let index = expected.firstIndex(of: "\(change.pair.productId)|\(change.pair.locale)|\(change.from)") else { return false }
            expected[index] = "\(change.pair.productId)|\(change.pair.locale)|\(change.to)"
        }
        return assignments(documents) == expected.sorted()
    }
}
