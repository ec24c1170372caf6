import Basics
import Foundation
public import RetentionMessagingModels
import YAML

/// Adds an environment's identifier to a declared `ExternalMessage`, as a minimal edit of the file
/// that holds it: one line under its `identifiers:` block (or, for one locale of a localized one,
/// under `localizations.<locale>:`), every other byte as written. The result
/// is parsed again and must read as the same documents with only that key added; otherwise there is
/// no edit, and the reason says why.
public enum ExternalIdentifierEdit {
    public static func adding(_ identifier: String, environment: Environment, toExternalMessage name: String, locale: String? = nil,
                              in text: String, file: String) -> Result<String, AppRealtimeURLEdit.EditRefusal> {
        let path = locale.map { ["localizations", $0] } ?? ["identifiers"]
        let block = path.joined(separator: ".")
        typealias Refusal = AppRealtimeURLEdit.EditRefusal
        let original: [YAMLDocument]
        do { original = try YAMLParser.parse(text, file: file) } catch { return .failure(Refusal("it does not parse: \(error.message)")) }
        guard let index = original.firstIndex(where: {
            $0.root["kind"]?.scalar?.text == "ExternalMessage" && $0.root["name"]?.scalar?.text == name
        }) else {
            return .failure(Refusal("it holds no ExternalMessage named '\(name)'"))
        }
        guard case .mapping(let identifiers)? = path.reduce(Optional(original[index].root), { $0?[$1] })?.kind, let last = identifiers.last,
              !identifiers.contains(where: { $0.key.scalar?.text == environment.rawValue }) else {
            return .failure(Refusal("'\(name)' has no \(block) block without \(environment.rawValue)"))
        }
        var lines = text.components(separatedBy: "\n")
        let firstKey = identifiers[0].key.location, lastValue = last.value.location
        let indent = firstKey.column - 1
        // One key per line, in block style: the new key goes on the line after the last one.
        guard identifiers.allSatisfy({ $0.key.location.column == firstKey.column && $0.value.location.line == $0.key.location.line }),
              Set(identifiers.map(\.key.location.line)).count == identifiers.count,
              lines.indices.contains(lastValue.line - 1), AppRealtimeURLEdit.blank(lines[firstKey.line - 1], upTo: indent) else {
            return .failure(Refusal("the \(block) of '\(name)' are not written one per line"))
        }
        let cr = text.contains("\r\n") ? "\r" : ""
        lines.insert(String(repeating: " ", count: indent) + environment.rawValue + ": " + identifier + cr, at: lastValue.line)
        let edited = lines.joined(separator: "\n")
        return readsBack(edited, as: original, document: index, path: path, environment: environment, identifier: identifier, file: file)
            ? .success(edited) : .failure(Refusal("the edited file would not read back with only \(block).\(environment.rawValue) added"))
    }

    static func readsBack(_ edited: String, as original: [YAMLDocument], document: Int, path: [String], environment: Environment,
                          identifier: String, file: String) -> Bool {
        guard let documents = try? YAMLParser.parse(edited, file: file), documents.count == original.count else { return false }
        for index in documents.indices where index != document {
            guard AppRealtimeURLEdit.same(documents[index].root, original[index].root) else { return false }
        }
        let root = documents[document].root
        guard path.reduce(Optional(root), { $0?[$1] })?[environment.rawValue]?.scalar?.text == identifier else { return false }
        return AppRealtimeURLEdit.same(root.removing(environment.rawValue, under: path), original[document].root)
    }
}
