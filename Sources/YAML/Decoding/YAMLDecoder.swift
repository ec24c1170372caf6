public import Basics
/// Decodes `Decodable` values from YAML nodes, with strict keys and errors that point at the file.
public struct YAMLDecoder: Sendable {
    /// Whether keys the type never asked for are errors; turn off to peek at part of a document.
    public var reportsUnknownKeys: Bool

    public init() {
        reportsUnknownKeys = true
    }

    public func decode<T: Decodable>(_ type: T.Type, from node: YAMLNode) throws(YAMLDecodingError) -> T {
        let context = DecodingContext(root: node)
        let decoder = NodeDecoder(node: node, codingPath: [], context: context)
        do {
            let value = try decoder.decodeValue(T.self)
            let unknown = reportsUnknownKeys ? context.unknownKeys(nearMissesOnly: false) : []
            let problems = context.recorded + unknown
            guard problems.isEmpty else { throw YAMLDecodingError(problems: Self.sorted(problems)) }
            return value
        } catch let error as ProblemError {
            // Decoding stopped early, so only unknown keys that are near misses (which explain most
            // missing keys) are sure to be unknown; they come along.
            let problems = context.recorded + [error.problem] + (reportsUnknownKeys ? context.unknownKeys(nearMissesOnly: true) : [])
            throw YAMLDecodingError(problems: Self.sorted(problems))
        } catch let error as YAMLDecodingError {
            throw error
        } catch {
            throw YAMLDecodingError(problems: [decoder.problem(for: error)])
        }
    }

    private static func sorted(_ problems: [YAMLDecodingError.Problem]) -> [YAMLDecodingError.Problem] {
        var seen = Set<YAMLDecodingError.Problem>()
        return problems.filter { seen.insert($0).inserted }.sorted { ($0.location, $0.keyPath) < ($1.location, $1.keyPath) }
    }

    public func decode<T: Decodable>(_ type: T.Type, from document: YAMLDocument) throws(YAMLDecodingError) -> T {
        try decode(type, from: document.root)
    }
}

extension Decoder {
    /// Where the value being decoded was written, when decoding from YAML (nil otherwise).
    public var sourceLocation: SourceLocation? {
        (self as? NodeDecoder)?.node.location
    }
}

/// A value decoding can stand in with after a problem, so that it carries on to find the next
/// one; the document is still refused.
public protocol YAMLPlaceholder {
    static var yamlPlaceholder: Self { get }
}

extension String: YAMLPlaceholder { public static var yamlPlaceholder: String { "" } }
extension Bool: YAMLPlaceholder { public static var yamlPlaceholder: Bool { false } }
extension Int: YAMLPlaceholder { public static var yamlPlaceholder: Int { 0 } }
extension Int64: YAMLPlaceholder { public static var yamlPlaceholder: Int64 { 0 } }
extension Double: YAMLPlaceholder { public static var yamlPlaceholder: Double { 0 } }
extension Array: YAMLPlaceholder { public static var yamlPlaceholder: Array { [] } }
extension Dictionary: YAMLPlaceholder { public static var yamlPlaceholder: Dictionary { [:] } }

/// One problem on its way out through `Decodable` code, which only throws `any Error`.
struct ProblemError: Error {
    var problem: YAMLDecodingError.Problem
}

/// State shared by every decoder of one `decode` call: which keys each mapping was asked for.
final class DecodingContext {
    let root: YAMLNode
    private var mappings: [String: MappingRecord] = [:]

    struct MappingRecord {
        var pairs: [YAMLPair]
        var asked: Set<String>
    }

    /// Problems decoding recovered from, in the order found.
    private(set) var recorded: [YAMLDecodingError.Problem] = []
    /// Key paths whose value was replaced by a placeholder: keys under them were never asked for.
    private var brokenPaths: [String] = []

    init(root: YAMLNode) {
        self.root = root
    }

    func record(_ problem: YAMLDecodingError.Problem, brokenPath: String) {
        recorded.append(problem)
        brokenPaths.append(brokenPath)
    }

    private func isUnderBrokenPath(_ path: String) -> Bool {
        brokenPaths.contains { path == $0 || path.hasPrefix($0 + ".") || path.hasPrefix($0 + "[") }
    }

    func register(path: String, pairs: [YAMLPair]) {
        if mappings[path] == nil { mappings[path] = MappingRecord(pairs: pairs, asked: []) }
    }

    func ask(path: String, key: String) {
        mappings[path]?.asked.insert(key)
    }

    /// Keys no decoding code asked for, each at its own place, sorted by place.
    func unknownKeys(nearMissesOnly: Bool) -> [YAMLDecodingError.Problem] {
        var problems: [YAMLDecodingError.Problem] = []
        for (path, record) in mappings where !isUnderBrokenPath(path) {
            let present = Set(record.pairs.compactMap { $0.key.scalar?.text })
            let candidates = record.asked.subtracting(present).sorted()
            for pair in record.pairs {
                guard let key = pair.key.scalar?.text else {
                    problems.append(.init(location: pair.key.location, keyPath: path,
                                          message: "expected a plain key, found \(NodeDecoder.describe(pair.key))",
                                          kind: .unknownKey))
                    continue
                }
                guard !record.asked.contains(key) else { continue }
                let suggestion = Self.nearMiss(key, in: candidates)
                if nearMissesOnly && suggestion == nil { continue }
                let hint: String?
                if let suggestion {
                    hint = "did you mean '\(suggestion)'?"
                } else if key == "<<" {
                    hint = "merge keys are not part of YAML 1.2; write the values out or use an alias for the whole value"
                } else if Self.looksLikeSplitText(pair, in: record.pairs) {
                    hint = "a comma inside { } separates keys: quote the text (\"…, …\")"
                        + (record.asked.isEmpty ? "" : "; known keys here: " + record.asked.sorted().joined(separator: ", "))
                } else if !record.asked.isEmpty {
                    hint = "known keys here: " + record.asked.sorted().joined(separator: ", ")
                } else {
                    hint = nil
                }
                problems.append(.init(location: pair.key.location, keyPath: KeyPathText.appending(key, to: path),
                                      message: "unknown key '\(key)'", hint: hint, kind: .unknownKey))
            }
        }
        return problems.sorted { ($0.location, $0.keyPath) < ($1.location, $1.keyPath) }
    }

    /// A key no manifest has — with a space in it, or without a value beside other keys on its line —
    /// is most often the rest of a text that a comma inside `{ }` cut off.
    static func looksLikeSplitText(_ pair: YAMLPair, in pairs: [YAMLPair]) -> Bool {
        guard let key = pair.key.scalar, !key.isQuoted else { return false }
        if key.text.contains(" ") { return true }
        guard let value = pair.value.scalar, !value.isQuoted, value.text.isEmpty else { return false }
        return pairs.contains { $0 != pair && $0.key.location.line == pair.key.location.line }
    }

    private static func nearMiss(_ key: String, in candidates: [String]) -> String? {
        EditDistance.nearest(key, in: candidates)
    }

    /// The deepest node a coding path reaches, for errors thrown by `Decodable` code.
    func node(at path: [any CodingKey]) -> YAMLNode {
        var node = root
        for key in path {
            switch node.kind {
            case .mapping(let pairs):
                guard let pair = pairs.first(where: { $0.key.scalar?.text == key.stringValue }) else { return node }
                node = pair.value
            case .sequence(let items):
                guard let index = key.intValue, items.indices.contains(index) else { return node }
                node = items[index]
            case .scalar:
                return node
            }
        }
        return node
    }
}

enum KeyPathText {
    static func render(_ path: [any CodingKey]) -> String {
        path.reduce("") { text, key in
            if let index = key.intValue, key is IndexKey { return text + "[\(index)]" }
            return appending(key.stringValue, to: text)
        }
    }

    static func appending(_ key: String, to path: String) -> String {
        path.isEmpty ? key : path + "." + key
    }
}

struct IndexKey: CodingKey {
    var stringValue: String { "\(index)" }
    var intValue: Int? { index }
    let index: Int

    init(index: Int) { self.index = index }
    init?(stringValue: String) { guard let index = Int(stringValue) else { return nil }; self.index = index }
    init?(intValue: Int) { self.index = intValue }
}

struct NameKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}
