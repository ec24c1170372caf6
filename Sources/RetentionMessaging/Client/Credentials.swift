import Foundation
import RetentionMessagingModels
public import Crypto

/// What the client signs its requests with: an App Store Connect In-App Purchase key and the ids
/// that go with it. Printing, debug-printing or dumping credentials never shows the key.
public struct Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var keyId: String
    public var issuerId: String
    public var bundleId: String
    public var privateKey: ES256PrivateKey

    public init(keyId: String, issuerId: String, bundleId: String, privateKey: ES256PrivateKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
    }

    public static let keyIdVariable = "RETENTION_SYNC_KEY_ID"
    public static let issuerIdVariable = "RETENTION_SYNC_ISSUER_ID"
    public static let privateKeyVariable = "RETENTION_SYNC_PRIVATE_KEY"
    public static let privateKeyFileVariable = "RETENTION_SYNC_PRIVATE_KEY_FILE"

    /// Reads `RETENTION_SYNC_KEY_ID`, `RETENTION_SYNC_ISSUER_ID`, and the key either as PEM text in
    /// `RETENTION_SYNC_PRIVATE_KEY` or as a `.p8` file path in `RETENTION_SYNC_PRIVATE_KEY_FILE`.
    /// The error names the variable and what to do; it never repeats a variable's value.
    public static func fromEnvironment(_ environment: [String: String], bundleId: String) throws(RetentionMessagingError) -> Credentials {
        func required(_ name: String, _ what: String) throws(RetentionMessagingError) -> String {
            let value = (environment[name] ?? "").trimmingWhitespace
            guard !value.isEmpty else {
                throw .credentials("\(name) is not set: set it to \(what)")
            }
            return value
        }
        let keyId = try required(keyIdVariable, "the key ID of your In-App Purchase key (App Store Connect → Users and Access → Integrations → In-App Purchase)")
        guard keyId.count <= 64, keyId.unicodeScalars.allSatisfy(\.isASCIIAlphanumeric) else {
            throw .credentials("\(keyIdVariable) is malformed: a key ID is letters and digits only (like 2X9R4HXF34)")
        }
        let issuerId = try required(issuerIdVariable, "the issuer ID shown above the key list in App Store Connect → Users and Access → Integrations")
        guard isUUID(issuerId) else {
            throw .credentials("\(issuerIdVariable) is malformed: an issuer ID is a UUID (like 57246542-96fe-1a63-e053-0824d011072a)")
        }
        guard !bundleId.isEmpty else {
            throw .credentials("no bundle id: the App manifest must name the app's bundle id")
        }
        let pemText = (environment[privateKeyVariable] ?? "").trimmingWhitespace
        let path = (environment[privateKeyFileVariable] ?? "").trimmingWhitespace
        let key: ES256PrivateKey
        switch (pemText.isEmpty, path.isEmpty) {
        case (true, true):
            throw .credentials("no private key: set \(privateKeyFileVariable) to the path of your .p8 file, or \(privateKeyVariable) to its PEM text")
        case (false, false):
            throw .credentials("both \(privateKeyVariable) and \(privateKeyFileVariable) are set: keep only one")
        case (false, true):
            do {
                key = try ES256PrivateKey(pem: unescapedNewlines(pemText))
            } catch {
                throw .credentials("\(privateKeyVariable) does not hold a usable key (\(error)); paste the whole .p8 file, BEGIN and END lines included")
            }
        case (true, false):
            do {
                key = try ES256PrivateKey(contentsOfFile: path)
            } catch {
                throw .credentials("\(privateKeyFileVariable) does not point to a usable key (\(error)); give the path of the .p8 file App Store Connect let you download")
            }
        }
        return Credentials(keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKey: key)
    }

    /// `8-4-4-4-12` hexadecimal digits: the only shape App Store Connect gives issuer ids.
    public static func isUUID(_ text: String) -> Bool { UUIDText.isUUID(text) }

    /// CI secret stores often hold a PEM on one line with literal `\n`; accept that form too.
    private static func unescapedNewlines(_ text: String) -> String {
        text.contains("\n") ? text : text.replacingOccurrences(of: "\\n", with: "\n")
    }

    public var description: String {
        "Credentials(keyId: \(keyId), issuerId: \(issuerId), bundleId: \(bundleId), privateKey: <redacted>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["keyId": keyId, "issuerId": issuerId, "bundleId": bundleId, "privateKey": "<redacted>"],
               displayStyle: .struct)
    }
}

extension Unicode.Scalar {
    var isASCIIAlphanumeric: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self) || ("0"..."9").contains(self)
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
