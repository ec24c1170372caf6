import Basics
public import Foundation
import Crypto
import RetentionMessagingModels
import YAML

/// Reads a manifest directory: every `*.yaml` / `*.yml` file in it (not in subdirectories), sorted
/// by name, each holding one or more documents with `apiVersion: retention-sync/v1` and a `kind`.
public enum ManifestLoader {
    /// The only `apiVersion` this version of retention-sync reads.
    public static let apiVersion = "retention-sync/v1"
    /// Every `kind` a document may have, as registered in `ManifestKinds.all`.
    public static let kinds = ManifestKinds.all.map { $0.name }

    /// Loads and converts every document, collecting every problem on the way. The set is nil
    /// only when there is no usable `App` document (everything else hangs off it).
    ///
    /// - Parameter displayPath: the directory as the user wrote it; diagnostics name files as
    ///   `displayPath/file.yaml`, so they are relative when the user's path was.
    public static func load(directory: URL, displayPath: String) -> (set: ManifestSet?, diagnostics: [Diagnostic]) {
        var loader = Loader(directory: directory, displayPath: displayPath)
        loader.run()
        return (loader.makeSet(), Diagnostic.sorted(loader.diagnostics))
    }

    /// Loads, then validates what could be loaded: the one call `validate`, `plan` and `apply` need.
    /// Checks that would only repeat a loading error (a reference to a message whose document did
    /// not decode, say) are left out.
    public static func loadAndValidate(directory: URL, displayPath: String) -> (set: ManifestSet?, diagnostics: [Diagnostic]) {
        let loaded = loadAndCheck(directory: directory, displayPath: displayPath)
        return (loaded.set, loaded.diagnostics)
    }

    /// `loadAndValidate`, with the references validation resolved: nil when there is no set or a
    /// reference names nothing.
    public static func loadAndCheck(directory: URL, displayPath: String)
        -> (set: ManifestSet?, diagnostics: [Diagnostic], validated: ValidatedManifests?) {
        var loader = Loader(directory: directory, displayPath: displayPath)
        loader.run()
        let set = loader.makeSet()
        var diagnostics = loader.diagnostics
        var validated: ValidatedManifests?
        if let set {
            let check = ManifestValidator.check(set, skipping: loader.broken)
            let repaired = loader.repaired
            diagnostics += check.diagnostics.filter { diagnostic in diagnostic.location.map { !repaired.contains($0) } ?? true }
            validated = try? check.validated.get()
        }
        return (set, Diagnostic.sorted(diagnostics), validated)
    }

    /// The file name as diagnostics show it.
    static func displayName(_ file: String, in displayPath: String) -> String {
        var prefix = displayPath
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix.isEmpty || prefix == "." { return file }
        return prefix.hasSuffix("/") ? prefix + file : prefix + "/" + file
    }
}

/// What failed to load, so that validation does not pile a second error on the first.
struct BrokenDocuments: Sendable {
    /// Names written in documents that did not decode.
    var names: Set<String> = []
    /// Kinds (by name) with a document that did not decode.
    var kinds: Set<String> = []
    /// A document whose kind is unknown could have been anything.
    var unknownKind = false
}

struct Loader {
    let directory: URL
    let displayPath: String
    var diagnostics: [Diagnostic] = []
    var broken = BrokenDocuments()
    /// Where a wrong value was replaced by a placeholder: validation says nothing more there.
    var repaired = Set<SourceLocation>()

    /// What the kinds collected, each under its own key.
    var declarations = ManifestDeclarations()
    /// Files that are not YAML: the App may be in one of them.
    private var unparsedFiles = 0
    private let decoder = YAMLDecoder()

    init(directory: URL, displayPath: String) {
        self.directory = directory.standardizedFileURL
        self.displayPath = displayPath
    }

    mutating func run() {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                .filter { !isDirectory(directory.appendingPathComponent($0)) }
                .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        } catch {
            diagnostics.append(.error("manifest-directory-unreadable", at: nil,
                                      "cannot read the manifest directory '\(displayPath)'",
                                      hint: "pass the directory with --manifests DIR, or create one with 'retention-sync init \(displayPath)'"))
            return
        }
        if files.isEmpty {
            diagnostics.append(.error("no-manifests", at: nil, "no *.yaml or *.yml files in '\(displayPath)'",
                                      hint: "create a starting point with 'retention-sync init DIR'"))
            return
        }
        for file in files { load(file: file) }
        for kind in ManifestKinds.all { kind.finish(&self) }
        if !sawApp && unparsedFiles == 0 {
            diagnostics.append(.error("missing-app", at: nil, "no App document in '\(displayPath)'",
                                      hint: "add a document with 'kind: App' declaring bundleId, environments and products"))
        }
    }

    private func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }

    private mutating func load(file: String) {
        let name = ManifestLoader.displayName(file, in: displayPath)
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path) else {
            diagnostics.append(.error("unreadable-file", at: SourceLocation(file: name, line: 1, column: 1),
                                      "cannot read this file", hint: "check its permissions"))
            // Like a file that does not parse, it could have held anything: names it would have
            // defined are not reported missing.
            broken.unknownKind = true
            unparsedFiles += 1
            return
        }
        let bytes = [UInt8](data)
        let documents: [YAMLDocument]
        do {
            documents = try YAMLParser.parse(bytes, file: name)
        } catch {
            let hint = error.hint ?? (error.message.contains("tab") ? nil : Self.tabHint(bytes, line: error.location.line))
                ?? Self.syntaxHint(error.message)
            diagnostics.append(.error("yaml-syntax", at: error.location, error.message, hint: hint))
            broken.unknownKind = true
            unparsedFiles += 1
            return
        }
        for document in documents { load(document: document) }
    }

    /// What to do about a YAML error libyaml or the tree builder reported.
    static func syntaxHint(_ message: String) -> String {
        if message.contains("duplicate key") { return "a key may appear once in each mapping; remove or rename one of them" }
        if message.contains("tab") { return "YAML indentation must use spaces; replace the tabs" }
        if message.contains("alias") { return "write the values out instead of repeating them through aliases" }
        if message.contains("bytes, over the limit") { return "split the documents into several files" }
        if message.contains("tag") { return "remove the tag; plain values are read by the YAML 1.2 core schema" }
        return "check the indentation, quotes and brackets on this line and the line before it; quote text holding ': ' or ' #'"
    }

    /// What to do about a value of the wrong type, when the decoder had nothing more specific.
    static func typeHint(_ message: String) -> String {
        if message.hasPrefix("expected a mapping") { return "write the keys of this value indented below it, or as { key: value }" }
        if message.hasPrefix("expected a sequence") { return "write a list, e.g. [a, b] or one '- item' per line" }
        if message.hasPrefix("expected a string") { return "quote the value to make it text" }
        if message.hasPrefix("expected an integer") || message.hasPrefix("expected a number") { return "write a number, like 1234567890 (digits, no quotes)" }
        return "see the README's Manifest format section for what this key holds"
    }

    /// libyaml reports a tab in indentation as an unexpected character; say what it really is.
    private static func tabHint(_ bytes: [UInt8], line: Int) -> String? {
        var current = 1
        var index = 0
        while index < bytes.count && current < line {
            if bytes[index] == UInt8(ascii: "\n") { current += 1 }
            index += 1
        }
        var hasTab = false
        while index < bytes.count && bytes[index] != UInt8(ascii: "\n") {
            if bytes[index] == UInt8(ascii: "\t") { hasTab = true }
            index += 1
        }
        return hasTab ? "this line contains a tab; YAML indentation must use spaces" : nil
    }

    private mutating func load(document: YAMLDocument) {
        let root = document.root
        guard case .mapping(let pairs) = root.kind else {
            if case .scalar(let scalar) = root.kind, case .null = scalar.resolved { return }
            diagnostics.append(.error("invalid-document", at: root.location,
                                      "a manifest document must be a mapping with apiVersion and kind",
                                      hint: "start the document with 'apiVersion: \(ManifestLoader.apiVersion)' and 'kind:'; separate documents with ---"))
            broken.unknownKind = true
            return
        }
        let name = pairs.first { $0.key.scalar?.text == "name" }?.value.scalar?.text
        guard let kind = checkHeader(pairs, at: root.location) else {
            if let name { broken.names.insert(name) }
            return
        }
        kind.load(root, name: name, into: &self)
    }

    /// Checks `apiVersion` and `kind`; returns the kind when the document can be read.
    private mutating func checkHeader(_ pairs: [YAMLPair], at location: SourceLocation) -> (any ManifestKind.Type)? {
        let apiVersion = pairs.first { $0.key.scalar?.text == "apiVersion" }?.value
        let kind = pairs.first { $0.key.scalar?.text == "kind" }?.value
        var usable = true
        if let apiVersion {
            let text = apiVersion.scalar?.text ?? ""
            if text != ManifestLoader.apiVersion {
                diagnostics.append(.error("unknown-api-version", at: apiVersion.location, "unknown apiVersion '\(text)'",
                                          hint: "this version of retention-sync reads 'apiVersion: \(ManifestLoader.apiVersion)'"))
                usable = false
            }
        } else {
            diagnostics.append(.error("missing-api-version", at: location, "document has no apiVersion",
                                      hint: "add 'apiVersion: \(ManifestLoader.apiVersion)'"))
            usable = false
        }
        guard let kind else {
            diagnostics.append(.error("missing-kind", at: location, "document has no kind",
                                      hint: "add 'kind:' with one of \(ManifestLoader.kinds.joined(separator: ", "))"))
            broken.unknownKind = true
            return nil
        }
        let text = kind.scalar?.text ?? ""
        guard let known = ManifestKinds.named(text) else {
            let suggestion = NearMiss.best(text, in: ManifestLoader.kinds)
            diagnostics.append(.error("unknown-kind", at: kind.location, "unknown kind '\(text)'",
                                      hint: suggestion.map { "did you mean '\($0)'?" }
                                        ?? "kinds are \(ManifestLoader.kinds.joined(separator: ", "))"))
            broken.unknownKind = true
            return nil
        }
        if !usable {
            known.markBroken(name: nil, in: &self)
            return nil
        }
        return known
    }

    /// Decodes a document, reporting every problem: after a failure the document is mended where
    /// the decoder said (see `mended(for:)`) and decoded again, a bounded number of times, so a
    /// wrong type in one field does not hide the problems of the others. nil when it cannot be mended.
    mutating func decode<T: Decodable>(_ type: T.Type, _ node: YAMLNode) -> T? {
        var current = node
        var reported = Set<YAMLDecodingError.Problem>()
        for _ in 0..<16 {
            do {
                return try decoder.decode(type, from: current)
            } catch {
                let fresh = error.problems.filter { !reported.contains($0) }
                report(fresh)
                reported.formUnion(fresh)
                // What stands in for a mended value is not checked again.
                for problem in fresh where problem.kind != .unknownKey { repaired.insert(problem.location) }
                guard !fresh.isEmpty, let mended = current.mended(for: fresh) else { return nil }
                current = mended
            }
        }
        return nil
    }

    private mutating func report(_ problems: [YAMLDecodingError.Problem]) {
        for problem in problems {
            let code = switch problem.kind {
            case .typeMismatch: "type-mismatch"
            case .missingKey: "missing-key"
            case .unknownKey: "unknown-key"
            case .invalidValue: "invalid-value"
            }
            let message: String
            switch problem.kind {
            case .missingKey, .unknownKey:
                // The message names the key; say where the mapping is instead of repeating it.
                let parent = Self.parent(of: problem.keyPath)
                message = parent.isEmpty ? problem.message : "\(problem.message) in \(parent)"
            case .typeMismatch, .invalidValue:
                message = problem.keyPath.isEmpty ? problem.message : "\(problem.keyPath): \(problem.message)"
            }
            let fallback = switch problem.kind {
            case .typeMismatch: Self.typeHint(problem.message)
            case .missingKey: "add it; see the README's Manifest format section for what this kind needs"
            case .unknownKey: "remove it; see the README's Manifest format section for the keys this kind has"
            case .invalidValue: "see the README's Manifest format section for what this key holds"
            }
            let hint = problem.hint ?? fallback
            diagnostics.append(.error(code, at: problem.location, message, hint: hint))
        }
    }

    /// `localizations.en-US` for `localizations.en-US.body`.
    static func parent(of keyPath: String) -> String {
        guard let dot = keyPath.lastIndex(of: ".") else { return "" }
        return String(keyPath[..<dot])
    }

    func makeSet() -> ManifestSet? {
        guard let app, !appBroken else { return nil }
        return ManifestSet(directory: directory, app: app, declarations: declarations)
    }
}
