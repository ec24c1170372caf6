import Basics
import Crypto

/// The keyed pseudonym of a customer: `hex(HMAC-SHA256(secret, originalTransactionId))`. Every `serve`
/// replica and every `outcomes` job of a team is given the same secret, so a customer's decisions and
/// outcomes carry the same pseudonym and join; nobody without the secret can tell who it is, or even
/// test a guess. The raw transaction id is never written anywhere.
///
/// `keyId` names the secret without revealing it (the first 8 hex digits of the HMAC of a fixed label),
/// so readers never join pseudonyms made with different secrets, and a rotation shows as a new key id.
public struct PseudonymKey: Sendable, CustomStringConvertible {
    /// The variable `serve` and `outcomes` read the secret from.
    public static let environmentVariable = "RETENTION_SYNC_PSEUDONYM_SECRET"
    /// During a rotation, the secret being replaced: outcomes are recorded under it too, so customers
    /// exposed before the rotation are still followed.
    public static let previousEnvironmentVariable = "RETENTION_SYNC_PSEUDONYM_SECRET_PREVIOUS"
    /// Shorter secrets are refused: 32 characters of `openssl rand -hex 32` carry 128 bits.
    public static let minimumLength = 32

    public let keyId: String
    private let hmac: HMACSHA256

    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    public init(secret: String, variable: String = PseudonymKey.environmentVariable) throws(Refusal) {
        let trimmed = secret.utf8.filter { $0 != 0x0A && $0 != 0x0D }
        guard trimmed.count >= Self.minimumLength else {
            throw Refusal(description: "\(variable) is \(trimmed.count) characters long; it must be at least \(Self.minimumLength) "
                + "(make one with `openssl rand -hex 32` and give every serve replica and the outcomes job the same value)")
        }
        hmac = HMACSHA256(key: Array(trimmed))
        keyId = String(hmac.mac(Array("retention-sync pseudonym key id".utf8)).hexString.prefix(8))
    }

    /// Reads the secret from the environment (`RETENTION_SYNC_PSEUDONYM_SECRET`, or the file
    /// `RETENTION_SYNC_PSEUDONYM_SECRET_FILE` names); nil when neither is set (or empty).
    public static func fromEnvironment(_ environment: [String: String]) throws(Refusal) -> PseudonymKey? {
        let value: String?
        do { value = try EnvironmentSecret.value(environmentVariable, in: environment) } catch { throw Refusal(description: error.description) }
        guard let value else { return nil }
        return try PseudonymKey(secret: value)
    }

    /// The secret being rotated out (`RETENTION_SYNC_PSEUDONYM_SECRET_PREVIOUS`, or its `_FILE`); nil
    /// when unset. Refused when it is the current secret, or set without one.
    public static func previousFromEnvironment(_ environment: [String: String], current: PseudonymKey?) throws(Refusal) -> PseudonymKey? {
        let value: String?
        do { value = try EnvironmentSecret.value(previousEnvironmentVariable, in: environment) } catch { throw Refusal(description: error.description) }
        guard let value else { return nil }
        guard let current else {
            throw Refusal(description: "\(previousEnvironmentVariable) is set but \(environmentVariable) is not: during a rotation set the new "
                + "secret in \(environmentVariable) and the old one in \(previousEnvironmentVariable)")
        }
        let previous = try PseudonymKey(secret: value, variable: previousEnvironmentVariable)
        guard previous.keyId != current.keyId else {
            throw Refusal(description: "\(previousEnvironmentVariable) is the same secret as \(environmentVariable) (key \(current.keyId)): "
                + "give it the secret being replaced, or unset it")
        }
        return previous
    }

    /// 64 lowercase hex digits.
    public func pseudonym(_ originalTransactionId: String) -> String {
        var id = originalTransactionId
        return id.withUTF8 { hmac.macHex($0) }
    }

    public var description: String { "PseudonymKey(keyId: \(keyId), secret: <redacted>)" }
}
