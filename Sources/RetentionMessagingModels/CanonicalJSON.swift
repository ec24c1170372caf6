public import Foundation

/// The one JSON form this project writes wherever bytes must be reproducible: keys sorted by
/// UTF-8 bytes, no escaped slashes, no whitespace. Identities, digests, plans and snapshots use it.
public enum CanonicalJSON {
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The same ordering, indented for people (plans, snapshots and status written to files).
    public static func encodePretty<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return try encoder.encode(value)
    }
}
