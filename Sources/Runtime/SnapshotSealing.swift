public import Foundation
import Crypto
import RetentionMessagingModels

extension RuntimeSnapshot {
    /// Sets `digest` = "sha256:" + hex SHA-256 of CanonicalJSON.encode(self with digest "").
    public func sealed() throws -> RuntimeSnapshot {
        var copy = self
        copy.digest = try computedDigest()
        return copy
    }

    /// Canonical bytes (CanonicalJSON.encodePretty + trailing newline) for the snapshot store.
    public func encoded() throws -> Data {
        var data = try CanonicalJSON.encodePretty(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Decodes and validates: schemaVersion supported, digest matches, rules well-formed (ids unique,
    /// split ranges inside 0...10000, responses carry what their kind needs). Refuses a corrupt one.
    public static func load(from data: Data) throws(SnapshotError) -> RuntimeSnapshot {
        // The version is read on its own first, so a snapshot from a newer schema is named as such
        // instead of failing on whichever field changed.
        struct VersionProbe: Decodable { var schemaVersion: Int }
        let decoder = JSONDecoder()
        let version: Int
        do {
            version = try decoder.decode(VersionProbe.self, from: data).schemaVersion
        } catch {
            throw .unreadable("not a runtime snapshot (\(describe(error)))")
        }
        guard version == currentSchemaVersion else { throw .unsupportedSchemaVersion(version) }

        let snapshot: RuntimeSnapshot
        do {
            snapshot = try decoder.decode(RuntimeSnapshot.self, from: data)
        } catch {
            throw .unreadable("not a runtime snapshot (\(describe(error)))")
        }
        let actual: String
        do {
            actual = try snapshot.computedDigest()
        } catch {
            throw .unreadable("cannot re-encode the snapshot to check its digest (\(error))")
        }
        guard snapshot.digest == actual else {
            throw .digestMismatch(expected: snapshot.digest, actual: actual)
        }
        if let problem = snapshot.firstProblem() { throw .invalid(problem) }
        return snapshot
    }

    public static func load(contentsOf url: URL) throws(SnapshotError) -> RuntimeSnapshot {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable("\(url.path): \(error.localizedDescription)")
        }
        return try load(from: data)
    }

    private func computedDigest() throws -> String {
        var unsealed = self
        unsealed.digest = ""
        return "sha256:" + Digest.sha256Hex(Array(try CanonicalJSON.encode(unsealed)))
    }

    /// The first reason an engine could not answer from this snapshot, in rule order.
    private func firstProblem() -> String? {
        if bundleId.isEmpty { return "bundleId is empty" }
        var seen = Set<String>()
        for (index, rule) in rules.enumerated() {
            let name = rule.id.isEmpty ? "rule #\(index + 1)" : "rule \(rule.id)"
            if rule.id.isEmpty { return "\(name) has an empty id" }
            guard seen.insert(rule.id).inserted else { return "\(name) appears twice; rule ids must be unique" }
            if let problem = Self.problem(in: rule.match) { return "\(name): \(problem)" }
            if let problem = Self.problem(in: rule.response) { return "\(name): \(problem)" }
        }
        for (from, to) in localeFallbacks.sorted(by: { $0.key < $1.key }) where from.isEmpty || to.isEmpty {
            return "localeFallbacks has an empty locale ('\(from)' → '\(to)')"
        }
        return nil
    }

    private static func problem(in match: SnapshotMatch) -> String? {
        if let notBefore = match.notBefore, let notAfter = match.notAfter, notBefore >= notAfter {
            return "its time window is empty (notBefore \(notBefore) is not before notAfter \(notAfter))"
        }
        if let split = match.split {
            if split.salt.isEmpty { return "its split has an empty salt" }
            guard 0 <= split.lowerBucket, split.lowerBucket < split.upperBucket,
                  split.upperBucket <= SnapshotSplit.bucketCount else {
                return "its split range [\(split.lowerBucket), \(split.upperBucket)) is not a non-empty range inside "
                    + "[0, \(SnapshotSplit.bucketCount)]"
            }
        }
        return nil
    }

    private static func problem(in response: SnapshotResponse) -> String? {
        if response.kind == .none { return nil }
        guard let identifiers = response.messageIdentifiers else {
            return "a \(response.kind.rawValue) response needs messageIdentifiers"
        }
        for (locale, identifier) in identifiers.sorted(by: { $0.key < $1.key }) where UUID(uuidString: identifier) == nil {
            return "the message identifier for \(locale) is not a UUID ('\(identifier)')"
        }
        switch response.kind {
        case .alternateProduct where (response.productId ?? "").isEmpty:
            return "an alternateProduct response needs a productId"
        case .promotionalOffer where (response.offerIdentifier ?? "").isEmpty:
            return "a promotionalOffer response needs an offerIdentifier"
        case .advancedCommerce where response.advancedCommerce == nil:
            return "an advancedCommerce response needs the change it recommends (advancedCommerce)"
        default:
            return nil
        }
    }
}

/// A decoding error in a sentence: which field, and what was wrong with it.
private func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return keys.isEmpty ? "the top level" : String(keys.drop { $0 == "." })
    }
    switch error {
    case .keyNotFound(let key, let context):
        let parent = path(context)
        return "missing '\(key.stringValue)'" + (context.codingPath.isEmpty ? "" : " in \(parent)")
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        return "\(path(context)): \(context.debugDescription)"
    case .dataCorrupted(let context):
        return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context)): \(context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}
