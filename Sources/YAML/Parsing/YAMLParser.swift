import Basics
/// Reads YAML streams into node trees that remember where every node was written.
public enum YAMLParser: Sendable {
    public static func parse(_ bytes: [UInt8], file: String, limits: YAMLLimits = .default) throws(YAMLError) -> [YAMLDocument] {
        guard bytes.count <= limits.maxInputBytes else {
            throw YAMLError(location: SourceLocation(file: file, line: 1, column: 1),
                            message: "file is \(bytes.count) bytes, over the limit of \(limits.maxInputBytes) bytes; split it into smaller files")
        }
        var builder = try TreeBuilder(reader: LibYAMLEventReader(bytes: bytes, file: file), limits: limits)
        return try builder.documents()
    }

    public static func parse(_ text: String, file: String, limits: YAMLLimits = .default) throws(YAMLError) -> [YAMLDocument] {
        try parse(Array(text.utf8), file: file, limits: limits)
    }
}

private let tagPrefix = "tag:yaml.org,2002:"

/// Turns the event stream into documents: anchors, the alias cap, duplicate keys and tags live here.
private struct TreeBuilder {
    let reader: LibYAMLEventReader
    let limits: YAMLLimits
    /// Anchor name → the anchored node and how many nodes it holds.
    var anchors: [String: (node: YAMLNode, count: Int)] = [:]
    var expandedNodes = 0
    var keyNodes = 0

    init(reader: LibYAMLEventReader, limits: YAMLLimits) {
        self.reader = reader
        self.limits = limits
    }

    mutating func documents() throws(YAMLError) -> [YAMLDocument] {
        var documents: [YAMLDocument] = []
        while true {
            let (event, mark) = try reader.next()
            switch event {
            case .streamStart:
                continue
            case .streamEnd:
                return documents
            case .documentStart:
                anchors = [:]
                let (first, firstMark) = try reader.next()
                let root = try node(first, at: firstMark, depth: 0).node
                let (end, endMark) = try reader.next()
                guard case .documentEnd = end else {
                    throw YAMLError(location: reader.location(endMark), message: "expected the end of the document")
                }
                documents.append(YAMLDocument(root: root, location: reader.location(mark)))
            default:
                throw YAMLError(location: reader.location(mark), message: "expected a document")
            }
        }
    }

    /// Builds the node that starts with `event`, returning it with the number of nodes it holds.
    private mutating func node(_ event: YAMLEvent, at mark: YAMLMark, depth: Int) throws(YAMLError) -> (node: YAMLNode, count: Int) {
        let location = reader.location(mark)
        switch event {
        case .scalar(let value, let anchor, let tag, let isQuoted):
            let scalar = try Self.scalar(value, tag: tag, isQuoted: isQuoted, at: location)
            return remember(YAMLNode(kind: .scalar(scalar), location: location), count: 1, anchor: anchor)

        case .alias(let name):
            guard let anchored = anchors[name] else {
                throw YAMLError(location: location, message: "alias '*\(name)' refers to no anchor '&\(name)' defined before it in this document")
            }
            expandedNodes += anchored.count
            guard expandedNodes <= limits.maxAliasExpansions else {
                throw YAMLError(location: location,
                                message: "aliases expand to more than \(limits.maxAliasExpansions) nodes (at '*\(name)'); the document looks like an alias bomb, write the values out or use fewer aliases",
                                related: anchored.node.location)
            }
            // The expansion is reported where the alias is used; its inner nodes keep their anchored places.
            var copy = anchored.node
            copy.location = location
            return (copy, anchored.count)

        case .sequenceStart(let anchor, _):
            try checkDepth(depth, at: location)
            var items: [YAMLNode] = []
            var count = 1
            while true {
                let (next, nextMark) = try reader.next()
                if case .sequenceEnd = next { break }
                let item = try node(next, at: nextMark, depth: depth + 1)
                items.append(item.node)
                count = Self.add(count, item.count)
            }
            return remember(YAMLNode(kind: .sequence(items), location: location), count: count, anchor: anchor)

        case .mappingStart(let anchor, _):
            try checkDepth(depth, at: location)
            var pairs: [YAMLPair] = []
            var seen: [YAMLScalar.Resolved: SourceLocation] = [:]
            var seenShapes: [KeyShape: SourceLocation] = [:]
            var count = 1
            while true {
                let (next, nextMark) = try reader.next()
                if case .mappingEnd = next { break }
                let key = try node(next, at: nextMark, depth: depth + 1)
                let (valueEvent, valueMark) = try reader.next()
                let value = try node(valueEvent, at: valueMark, depth: depth + 1)
                if let identity = Self.identity(of: key.node) {
                    if let first = seen[identity] {
                        throw YAMLError(location: key.node.location,
                                        message: "duplicate key '\(key.node.scalar?.text ?? "")', first written at \(first.line):\(first.column); remove one of them",
                                        related: first)
                    }
                    seen[identity] = key.node.location
                } else {
                    // Hashing one canonical form per key keeps the check linear; the budget keeps it cheap.
                    keyNodes = Self.add(keyNodes, key.count)
                    guard keyNodes <= limits.maxKeyNodes else {
                        throw YAMLError(location: key.node.location,
                                        message: "mapping keys that are sequences or mappings hold more than \(limits.maxKeyNodes) nodes in this file; use plain scalar keys")
                    }
                    let shape = KeyShape(key.node)
                    if let earlier = seenShapes[shape] {
                        throw YAMLError(location: key.node.location,
                                        message: "duplicate key, first written at \(earlier.line):\(earlier.column)",
                                        related: earlier)
                    }
                    seenShapes[shape] = key.node.location
                }
                pairs.append(YAMLPair(key: key.node, value: value.node))
                count = Self.add(count, Self.add(key.count, value.count))
            }
            return remember(YAMLNode(kind: .mapping(pairs), location: location), count: count, anchor: anchor)

        case .streamStart, .streamEnd, .documentStart, .documentEnd, .mappingEnd, .sequenceEnd:
            throw YAMLError(location: location, message: "expected a value")
        }
    }

    private func checkDepth(_ depth: Int, at location: SourceLocation) throws(YAMLError) {
        guard depth < limits.maxDepth else {
            throw YAMLError(location: location, message: "mappings and sequences nest deeper than \(limits.maxDepth) levels")
        }
    }

    private mutating func remember(_ node: YAMLNode, count: Int, anchor: String?) -> (node: YAMLNode, count: Int) {
        if let anchor { anchors[anchor] = (node, count) }
        return (node, count)
    }

    private static func add(_ lhs: Int, _ rhs: Int) -> Int {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? .max : sum
    }

    /// Scalar keys compare by value, so `1` and `0x1` collide and `"1"` and `1` do not.
    private static func identity(of key: YAMLNode) -> YAMLScalar.Resolved? {
        guard let scalar = key.scalar else { return nil }
        if case .float(let value) = scalar.resolved, value.isNaN { return .string(".nan") }
        return scalar.resolved
    }

    /// Quoted scalars are strings; plain ones resolve by the core schema; core-schema tags are honoured,
    /// and the non-specific tag `!` makes a string, as YAML 1.2 says.
    private static func scalar(_ value: String, tag: String?, isQuoted: Bool, at location: SourceLocation) throws(YAMLError) -> YAMLScalar {
        guard let tag else { return YAMLScalar(text: value, isQuoted: isQuoted) }
        if tag == "!" { return YAMLScalar(text: value, isQuoted: isQuoted, resolved: .string(value)) }
        guard tag.hasPrefix(tagPrefix) else {
            throw YAMLError(location: location, message: "unsupported tag '\(tag)'; only the core schema tags (!!str, !!int, !!float, !!bool, !!null) are understood")
        }
        let name = String(tag.dropFirst(tagPrefix.count))
        if name == "str" { return YAMLScalar(text: value, isQuoted: isQuoted, resolved: .string(value)) }
        let resolved = CoreSchema.resolve(plain: value)
        let matches: Bool
        switch (name, resolved) {
        case ("int", .int), ("float", .float), ("bool", .bool), ("null", .null): matches = true
        case ("float", .int(let int)): return YAMLScalar(text: value, isQuoted: isQuoted, resolved: .float(Double(int)))
        default: matches = false
        }
        guard matches else {
            throw YAMLError(location: location, message: "'\(value)' is not a valid !!\(name)")
        }
        return YAMLScalar(text: value, isQuoted: isQuoted, resolved: resolved)
    }
}

/// A canonical, hashable form of a node used as a key: equal exactly when two keys are the same
/// YAML value (scalars by their resolved value, collections element by element in order).
private indirect enum KeyShape: Hashable {
    case scalar(YAMLScalar.Resolved)
    case notANumber
    case sequence([KeyShape])
    case mapping([KeyShape])

    init(_ node: YAMLNode) {
        switch node.kind {
        case .scalar(let scalar):
            if case .float(let value) = scalar.resolved, value.isNaN { self = .notANumber } else { self = .scalar(scalar.resolved) }
        case .sequence(let items):
            self = .sequence(items.map(KeyShape.init))
        case .mapping(let pairs):
            self = .mapping(pairs.flatMap { [KeyShape($0.key), KeyShape($0.value)] })
        }
    }
}
