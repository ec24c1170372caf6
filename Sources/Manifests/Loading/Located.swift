import Basics
import YAML

/// A decoded value together with the place it was written, so later checks can point at it.
struct Located<Value: Decodable>: Decodable {
    var value: Value
    var location: SourceLocation

    init(value: Value, location: SourceLocation) {
        self.value = value
        self.location = location
    }

    init(from decoder: any Decoder) throws {
        // The YAML decoder always knows the place; the fallback only matters for other decoders.
        location = decoder.sourceLocation ?? SourceLocation(file: "", line: 0, column: 0)
        value = try Value(from: decoder)
    }
}

extension Located: YAMLPlaceholder where Value: YAMLPlaceholder {
    static var yamlPlaceholder: Located { Located(value: .yamlPlaceholder, location: SourceLocation(file: "", line: 0, column: 0)) }
}

extension StarOrList: YAMLPlaceholder {
    static var yamlPlaceholder: StarOrList { .list([]) }
}

/// `"*"` or a list of names, as `products` and `locales` are written in `Defaults`.
enum StarOrList: Decodable, Sendable {
    case all(SourceLocation)
    case list([Located<String>])

    init(from decoder: any Decoder) throws {
        let location = decoder.sourceLocation ?? SourceLocation(file: "", line: 0, column: 0)
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            guard text == "*" else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected \"*\" or a list, found '\(text)' (write a single value as [\(text)])"))
            }
            self = .all(location)
        } else {
            self = .list(try [Located<String>](from: decoder))
        }
    }
}

extension Located: Sendable where Value: Sendable {}
