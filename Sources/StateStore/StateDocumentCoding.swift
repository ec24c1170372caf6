public import Foundation
public import Basics
import Crypto
import RetentionMessagingModels
import Runtime

/// Why bytes are not a usable state document. The store wraps it with its own name.
public enum StateDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not JSON, or JSON of the wrong shape.
    case corrupt(String)
    /// A `format_version` this build does not read.
    case unsupportedFormatVersion(String)
    case digestMismatch(expected: String, actual: String)
    /// A document (or legacy snapshot) of another App or environment.
    case wrongOwner(String)

    public var description: String {
        switch self {
        case .corrupt(let reason):
            "the state document does not parse (\(reason))"
        case .unsupportedFormatVersion(let version):
            "the state document has format_version \(version), which this retention-sync does not read (it reads 1.x); upgrade retention-sync"
        case .digestMismatch(let expected, let actual):
            "the state document's digest does not match its content (recorded \(expected), computed \(actual)); it was changed or damaged after it was written"
        case .wrongOwner(let reason):
            "the state document is not this environment's: \(reason); two environments or Apps must not share one store location"
        }
    }
}

/// How bytes were read: a state document, or a runtime snapshot file of the kind `snapshotPath`
/// held before the state store, migrated into a document.
public enum StateDocumentSource: Sendable, Hashable {
    case document
    case legacySnapshot
}

extension StateDocument {
    /// Sets `digest` over everything else.
    public func sealed() throws -> StateDocument {
        var copy = self
        copy.digest = try computedDigest()
        return copy
    }

    /// The bytes a store writes: the sealed document in this build's format, pretty, keys sorted,
    /// with a trailing newline.
    public func encoded() throws -> Data {
        var current = self
        current.formatVersion = Self.currentFormatVersion
        var data = try Self.encoder(pretty: true).encode(try current.sealed())
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Reads a state document (or migrates a legacy runtime snapshot) and checks its version, its
    /// digest and, when given, that it belongs to `owner`.
    public static func decode(_ data: Data, expecting owner: StateOwner?) throws(StateDocumentError) -> (document: StateDocument, source: StateDocumentSource) {
        struct Probe: Decodable {
            var formatVersion: String?
            var schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case formatVersion = "format_version", schemaVersion }
        }
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: data)
        } catch {
            throw .corrupt(Self.describe(error))
        }
        if probe.formatVersion == nil, probe.schemaVersion != nil {
            let document = try migrating(legacySnapshot: data, expecting: owner)
            return (document, .legacySnapshot)
        }
        guard let version = probe.formatVersion else { throw .corrupt("no format_version") }
        guard version.split(separator: ".").first == "1" else { throw .unsupportedFormatVersion(version) }

        let document: StateDocument
        do {
            document = try decoder().decode(StateDocument.self, from: data)
        } catch {
            throw .corrupt(Self.describe(error))
        }
        // Over the bytes as received, so a field a newer 1.x writer added counts too.
        let actual: String
        do {
            actual = try Self.digest(ofJSON: data)
        } catch {
            throw .corrupt("cannot re-encode it to check its digest (\(error))")
        }
        guard document.digest == actual else { throw .digestMismatch(expected: document.digest, actual: actual) }
        if let snapshot = document.snapshot {
            // The embedded snapshot keeps its own digest; checking it names a damaged snapshot precisely.
            do {
                _ = try RuntimeSnapshot.load(from: try CanonicalJSON.encode(snapshot))
            } catch let error as SnapshotError {
                throw .corrupt("published_snapshot: \(error.description)")
            } catch {
                throw .corrupt("published_snapshot: \(error)")
            }
            guard snapshot.bundleId == document.app.bundleId, snapshot.environment == document.environment else {
                throw .wrongOwner("its published_snapshot belongs to \(snapshot.bundleId) \(snapshot.environment.rawValue)")
            }
        }
        if let owner, let reason = owner.mismatch(with: document.owner) { throw .wrongOwner(reason) }
        return (document, .document)
    }

    /// A document holding a legacy runtime snapshot file as its published snapshot. Nothing else was
    /// recorded before the state store existed, so the record of content starts empty.
    public static func migrating(legacySnapshot data: Data, expecting owner: StateOwner?) throws(StateDocumentError) -> StateDocument {
        let snapshot: RuntimeSnapshot
        do {
            snapshot = try RuntimeSnapshot.load(from: data)
        } catch {
            switch error {
            case .digestMismatch(let expected, let actual): throw .digestMismatch(expected: expected, actual: actual)
            default: throw .corrupt("legacy snapshot: \(error.description)")
            }
        }
        let snapshotOwner = StateOwner(bundleId: snapshot.bundleId, appAppleId: snapshot.appAppleId, environment: snapshot.environment)
        if let owner, let reason = owner.mismatch(with: snapshotOwner) { throw .wrongOwner(reason) }
        return StateDocument(app: StateApp(bundleId: snapshot.bundleId, appAppleId: owner?.appAppleId ?? snapshot.appAppleId),
                             environment: snapshot.environment, snapshot: snapshot)
    }

    func computedDigest() throws -> String {
        try Self.digest(ofJSON: try Self.encoder(pretty: false).encode(self))
    }

    /// `sha256:` over the canonical JSON of a document's every field, known or not, with `digest`
    /// set to "": what a writer seals and a reader checks, whichever 1.x wrote the document.
    static func digest(ofJSON data: Data) throws -> String {
        guard case .object(var fields) = try JSONValue(parsing: data) else {
            throw StateDocumentError.corrupt("the document is not a JSON object")
        }
        fields["digest"] = .string("")
        return "sha256:" + Digest.sha256Hex(Array(try CanonicalJSON.encode(JSONValue.object(fields))))
    }

    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .utcMilliseconds
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .utcMilliseconds
        return decoder
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "" : " at \(keys.hasPrefix(".") ? String(keys.dropFirst()) : keys)"
        }
        switch error {
        case .dataCorrupted(let context): return context.debugDescription + path(context)
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)'" + path(context)
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return context.debugDescription + path(context)
        @unknown default: return "\(error)"
        }
    }
}

/// Times in the document: UTC, millisecond precision, `2026-01-31T12:00:00.000Z` (`UTCTime`'s
/// millisecond form).
public enum StateTime {
    public static func format(_ time: UTCTime) -> String {
        time.formatted()
    }

    /// Exactly the form `format` writes; anything else is nil.
    public static func parse(_ text: String) -> UTCTime? {
        UTCTime.parse(text, exactly: .milliseconds)
    }
}
