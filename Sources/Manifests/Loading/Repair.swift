import Basics
import YAML

/// A document that does not decode is mended where the decoder said it was wrong, and decoded again,
/// so that one run reports every problem: a wrong type becomes a placeholder of the right type, an
/// unknown key is dropped. What a placeholder stands in for is never reported twice.
extension YAMLNode {
    /// A node of the type a type-mismatch message asks for (`expected a string, found …`), or nil.
    static func placeholder(for message: String, at location: SourceLocation) -> YAMLNode? {
        let kind: YAMLNode.Kind
        if message.hasPrefix("expected a string") {
            kind = .scalar(YAMLScalar(text: "", isQuoted: true))
        } else if message.hasPrefix("expected a mapping") {
            kind = .mapping([])
        } else if message.hasPrefix("expected a sequence") {
            kind = .sequence([])
        } else if message.hasPrefix("expected an integer") || message.hasPrefix("expected a number") {
            kind = .scalar(YAMLScalar(text: "0", isQuoted: false))
        } else if message.hasPrefix("expected a boolean") {
            kind = .scalar(YAMLScalar(text: "false", isQuoted: false))
        } else {
            return nil
        }
        return YAMLNode(kind: kind, location: location)
    }

    /// This tree with the first value at `location` (in document order) replaced; nil when none is there.
    func replacingValue(at location: SourceLocation, with replacement: YAMLNode) -> YAMLNode? {
        switch kind {
        case .scalar:
            return nil
        case .mapping(var pairs):
            for index in pairs.indices {
                if pairs[index].value.location == location {
                    pairs[index].value = replacement
                    return YAMLNode(kind: .mapping(pairs), location: self.location)
                }
                if let inner = pairs[index].value.replacingValue(at: location, with: replacement) {
                    pairs[index].value = inner
                    return YAMLNode(kind: .mapping(pairs), location: self.location)
                }
            }
            return nil
        case .sequence(var items):
            for index in items.indices {
                if items[index].location == location {
                    items[index] = replacement
                    return YAMLNode(kind: .sequence(items), location: self.location)
                }
                if let inner = items[index].replacingValue(at: location, with: replacement) {
                    items[index] = inner
                    return YAMLNode(kind: .sequence(items), location: self.location)
                }
            }
            return nil
        }
    }

    /// This tree without the pair whose key is written at `location`; nil when none is there.
    func removingKey(at location: SourceLocation) -> YAMLNode? {
        switch kind {
        case .scalar:
            return nil
        case .mapping(var pairs):
            if let index = pairs.firstIndex(where: { $0.key.location == location }) {
                pairs.remove(at: index)
                return YAMLNode(kind: .mapping(pairs), location: self.location)
            }
            for index in pairs.indices {
                if let inner = pairs[index].value.removingKey(at: location) {
                    pairs[index].value = inner
                    return YAMLNode(kind: .mapping(pairs), location: self.location)
                }
            }
            return nil
        case .sequence(var items):
            for index in items.indices {
                if let inner = items[index].removingKey(at: location) {
                    items[index] = inner
                    return YAMLNode(kind: .sequence(items), location: self.location)
                }
            }
            return nil
        }
    }

    /// The tree with every problem mended that can be, or nil when one cannot (a missing key).
    func mended(for problems: [YAMLDecodingError.Problem]) -> YAMLNode? {
        var node = self
        for problem in problems {
            switch problem.kind {
            case .typeMismatch, .invalidValue:
                guard let placeholder = YAMLNode.placeholder(for: problem.message, at: problem.location),
                      let replaced = node.replacingValue(at: problem.location, with: placeholder) else { return nil }
                node = replaced
            case .unknownKey:
                guard let removed = node.removingKey(at: problem.location) else { return nil }
                node = removed
            case .missingKey:
                return nil
            }
        }
        return node
    }
}
