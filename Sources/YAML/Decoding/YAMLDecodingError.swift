public import Basics
/// Everything wrong with a document as decoded into a `Decodable` type.
public struct YAMLDecodingError: Error, Sendable, CustomStringConvertible {
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public var location: SourceLocation
        /// Like `rules[2].response.message`; empty at the root.
        public var keyPath: String
        /// Like `expected a string, found a mapping`.
        public var message: String
        /// Like `did you mean 'header'?`.
        public var hint: String?
        public var kind: Kind

        public enum Kind: Sendable, Hashable { case typeMismatch, missingKey, unknownKey, invalidValue }

        public init(location: SourceLocation, keyPath: String, message: String, hint: String? = nil, kind: Kind) {
            self.location = location
            self.keyPath = keyPath
            self.message = message
            self.hint = hint
            self.kind = kind
        }

        /// `file:line:column: rules[2].message: expected a string, found a mapping (hint)`.
        public var description: String {
            var text = "\(location): "
            if !keyPath.isEmpty { text += "\(keyPath): " }
            text += message
            if let hint { text += " (\(hint))" }
            return text
        }
    }

    /// Sorted by location; a type error gives one, unknown keys give one each.
    public var problems: [Problem]

    public init(problems: [Problem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
