public import Basics
/// One node of a parsed YAML document, with the place it was written.
public struct YAMLNode: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case scalar(YAMLScalar)
        /// Pairs in the order they were written.
        case mapping([YAMLPair])
        case sequence([YAMLNode])
    }

    public var kind: Kind
    public var location: SourceLocation

    public init(kind: Kind, location: SourceLocation) {
        self.kind = kind
        self.location = location
    }

    /// The scalar, when this node is one.
    public var scalar: YAMLScalar? {
        if case .scalar(let scalar) = kind { return scalar }
        return nil
    }

    /// The value for a scalar key written as `key`, when this node is a mapping.
    public subscript(key: String) -> YAMLNode? {
        guard case .mapping(let pairs) = kind else { return nil }
        return pairs.first { $0.key.scalar?.text == key }?.value
    }
}

public struct YAMLPair: Sendable, Hashable {
    public var key: YAMLNode
    public var value: YAMLNode

    public init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}

public struct YAMLScalar: Sendable, Hashable {
    /// The scalar's source text (after unescaping quotes and folding blocks).
    public var text: String
    /// Single or double quoted, or a literal or folded block: always a string.
    public var isQuoted: Bool
    /// The value by the YAML 1.2 core schema.
    public var resolved: Resolved

    public enum Resolved: Sendable, Hashable {
        case null
        case bool(Bool)
        case int(Int64)
        case float(Double)
        case string(String)
    }

    public init(text: String, isQuoted: Bool, resolved: Resolved) {
        self.text = text
        self.isQuoted = isQuoted
        self.resolved = resolved
    }

    /// A scalar resolved by the core schema, as if written plain (or quoted).
    public init(text: String, isQuoted: Bool) {
        self.init(text: text, isQuoted: isQuoted,
                  resolved: isQuoted ? .string(text) : CoreSchema.resolve(plain: text))
    }
}

/// One document of a stream (`---` separated).
public struct YAMLDocument: Sendable {
    public var root: YAMLNode
    /// Where the document starts (its `---`, or its first node).
    public var location: SourceLocation

    public init(root: YAMLNode, location: SourceLocation) {
        self.root = root
        self.location = location
    }
}

/// Caps that keep a hostile or mistaken file from exhausting memory or time.
public struct YAMLLimits: Sendable {
    public var maxInputBytes: Int
    /// Nodes produced by expanding aliases, counted over the whole stream.
    public var maxAliasExpansions: Int
    /// Nesting depth of mappings and sequences.
    public var maxDepth: Int

    /// Nodes inside non-scalar mapping keys, summed over the whole stream: the duplicate-key check
    /// hashes each such key once, so this bounds its total work.
    public var maxKeyNodes: Int

    public init(maxInputBytes: Int = 8 * 1024 * 1024, maxAliasExpansions: Int = 10_000, maxDepth: Int = 256,
                maxKeyNodes: Int = 1_000_000) {
        self.maxInputBytes = maxInputBytes
        self.maxAliasExpansions = maxAliasExpansions
        self.maxDepth = maxDepth
        self.maxKeyNodes = maxKeyNodes
    }

    public static let `default` = YAMLLimits()
}

/// A file that is not well-formed YAML, or breaks a rule this project adds (duplicate keys, caps).
public struct YAMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String
    /// Another place the message refers to, e.g. the first occurrence of a duplicate key.
    public var related: SourceLocation?
    /// What to do about it, when the parser knows better than a generic hint.
    public var hint: String?

    public init(location: SourceLocation, message: String, related: SourceLocation? = nil, hint: String? = nil) {
        self.location = location
        self.message = message
        self.related = related
        self.hint = hint
    }

    public var description: String { "\(location): \(message)" }
}
