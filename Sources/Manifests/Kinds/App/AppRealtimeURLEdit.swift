import Basics
import Foundation
public import RetentionMessagingModels
import YAML

/// Declares an environment's realtime URL in the text of the file that holds the App document, as
/// a minimal edit: a comment line and the `realtimeURL` key are inserted, and every other byte
/// stays as written (comments, order, quoting). The result is parsed again and must read as the
/// same documents with only that key added; otherwise there is no edit, and the reason says why.
public enum AppRealtimeURLEdit {
    public static func declaring(_ url: String, environment: Environment, comment: String,
                                 in text: String, file: String) -> Result<String, EditRefusal> {
        let original: [YAMLDocument]
        do { original = try YAMLParser.parse(text, file: file) } catch { return .failure(EditRefusal("it does not parse: \(error.message)")) }
        guard let app = original.firstIndex(where: { $0.root["kind"]?.scalar?.text == "App" }) else {
            return .failure(EditRefusal("it holds no App document"))
        }
        guard case .mapping(let environments)? = original[app].root["environments"]?.kind,
              let pair = environments.first(where: { $0.key.scalar?.text == environment.rawValue }) else {
            return .failure(EditRefusal("its App lists no environments.\(environment.rawValue)"))
        }
        guard case .mapping(let settings) = pair.value.kind, !settings.contains(where: { $0.key.scalar?.text == "realtimeURL" }) else {
            return .failure(EditRefusal("environments.\(environment.rawValue) is not a mapping without a realtimeURL"))
        }
        let newline = text.contains("\r\n") ? "\r\n" : "\n"
        var lines = text.components(separatedBy: "\n")
        let keyLine = pair.key.location.line - 1, keyIndent = pair.key.location.column - 1
        let valueLine = pair.value.location.line - 1, valueIndent = pair.value.location.column - 1
        guard lines.indices.contains(keyLine), lines.indices.contains(valueLine),
              blank(lines[keyLine], upTo: keyIndent), !comment.contains(where: \.isNewline) else {
            return .failure(EditRefusal("environments.\(environment.rawValue) is not written as one key per line"))
        }
        let cr = newline == "\r\n" ? "\r" : ""
        if valueLine > keyLine && blank(lines[valueLine], upTo: valueIndent) {
            // A block mapping: the key goes first among the settings, with the comment above it.
            let indent = String(repeating: " ", count: valueIndent)
            lines.insert(contentsOf: [indent + "# " + comment + cr, indent + "realtimeURL: " + scalar(url) + cr], at: valueLine)
        } else if valueLine == keyLine, let brace = index(in: lines[keyLine], column: valueIndent), lines[keyLine][brace] == "{" {
            // A flow mapping ({ stateStore: … }): the key goes first inside the braces, the comment above the line.
            let after = lines[keyLine].index(after: brace)
            lines[keyLine].insert(contentsOf: " realtimeURL: " + scalar(url) + (settings.isEmpty ? " " : ","), at: after)
            lines.insert(String(repeating: " ", count: keyIndent) + "# " + comment + cr, at: keyLine)
        } else {
            return .failure(EditRefusal("environments.\(environment.rawValue) is written in a form this edit does not handle"))
        }
        let edited = lines.joined(separator: "\n")
        return readsBack(edited, as: original, app: app, environment: environment, url: url, file: file)
            ? .success(edited) : .failure(EditRefusal("the edited file would not read back as the same App with only realtimeURL added"))
    }

    /// Why the file was left as it is.
    public struct EditRefusal: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    static func blank(_ line: String, upTo column: Int) -> Bool {
        line.unicodeScalars.count >= column && line.unicodeScalars.prefix(column).allSatisfy { $0 == " " }
    }

    /// The index of the character at a 0-based column, counted as libyaml counts (in code points).
    static func index(in line: String, column: Int) -> String.Index? {
        let scalars = line.unicodeScalars
        guard let position = scalars.index(scalars.startIndex, offsetBy: column, limitedBy: scalars.endIndex),
              position < scalars.endIndex else { return nil }
        return position.samePosition(in: line)
    }

    /// Plain when nothing in the URL means something to YAML (in a block or a flow mapping), else double-quoted.
    static func scalar(_ url: String) -> String {
        let plain = url.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || ":/._~%?=&@!$*+;-#".unicodeScalars.contains(scalar))
        }
        if plain && url.first?.isLetter == true { return url }
        return "\"" + url.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Whether `edited` parses into the same documents as `original`, but for the one key added.
    static func readsBack(_ edited: String, as original: [YAMLDocument], app: Int, environment: Environment, url: String, file: String) -> Bool {
        guard let documents = try? YAMLParser.parse(edited, file: file), documents.count == original.count else { return false }
        for index in documents.indices where index != app {
            guard same(documents[index].root, original[index].root) else { return false }
        }
        let root = documents[app].root
        guard root["environments"]?[environment.rawValue]?["realtimeURL"]?.scalar?.resolved == .string(url) else { return false }
        return same(root.removing("realtimeURL", under: ["environments", environment.rawValue]), original[app].root)
    }

    /// Equal content, wherever it was written.
    static func same(_ a: YAMLNode, _ b: YAMLNode) -> Bool {
        switch (a.kind, b.kind) {
        case (.scalar(let x), .scalar(let y)): x == y
        case (.sequence(let x), .sequence(let y)): x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.mapping(let x), .mapping(let y)):
            x.count == y.count && zip(x, y).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
        default: false
        }
    }
}

extension YAMLNode {
    /// This tree without the key `key` in the mapping that `path` leads to.
    func removing(_ key: String, under path: [String]) -> YAMLNode {
        guard case .mapping(var pairs) = kind else { return self }
        if let first = path.first {
            guard let index = pairs.firstIndex(where: { $0.key.scalar?.text == first }) else { return self }
            pairs[index].value = pairs[index].value.removing(key, under: Array(path.dropFirst()))
        } else {
            pairs.removeAll { $0.key.scalar?.text == key }
        }
        return YAMLNode(kind: .mapping(pairs), location: location)
    }
}
