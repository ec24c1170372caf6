public import Basics
import Foundation

/// One set of AWS credentials: a key pair, and for temporary credentials the session token sent as
/// `x-amz-security-token` and the time they expire. The secret and the token never appear in
/// `description`, `dump` or a debugger.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String?
    /// nil: they do not expire (long-term keys).
    public var expiration: UTCTime?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil, expiration: UTCTime? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    public var description: String {
        "AWS credentials (<redacted>\(expiration.map { ", expiring \($0.formatted())" } ?? ""))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["expiration": expiration as Any], displayStyle: .struct)
    }
}

/// What one place credentials may come from answered: credentials, or why it has none. A reason
/// names variables, files and hosts, never a key, a token or a secret.
public enum AWSCredentialOutcome: Sendable {
    case credentials(AWSCredentials)
    /// The source is not set up here (its variables are unset, its file is missing).
    case notConfigured(String)
    /// The source is set up but could not give credentials.
    case failed(String)
}

/// One place credentials may come from, in the order the AWS SDKs try them: the environment, web
/// identity, the container endpoint, the shared files, the instance metadata service.
public protocol AWSCredentialSource: Sendable {
    /// How the chain's error names it: "environment (AWS_ACCESS_KEY_ID)".
    var name: String { get }
    /// Asked once at first, and again whenever temporary credentials near their expiry.
    func resolve() async -> AWSCredentialOutcome
}

/// Long-term keys given up front, as a test or an embedding program passes them.
public struct StaticCredentialSource: AWSCredentialSource {
    public let name: String
    private let credentials: AWSCredentials

    public init(_ credentials: AWSCredentials, name: String = "static credentials") {
        self.credentials = credentials
        self.name = name
    }

    public func resolve() async -> AWSCredentialOutcome { .credentials(credentials) }
}

/// The parts the answers of STS, the container endpoint and the instance metadata service share.
enum CredentialAnswer {
    /// `2024-05-01T12:00:00Z`, with or without fractional seconds (RFC 3339).
    static func date(_ text: String) -> UTCTime? {
        try? UTCTime.parse(text)
    }

    /// The JSON the container endpoint and the instance metadata service send:
    /// `AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`.
    static func json(_ body: Data) -> AWSCredentials? {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
              let id = object["AccessKeyId"] as? String, !id.isEmpty,
              let secret = object["SecretAccessKey"] as? String, !secret.isEmpty else { return nil }
        let token = (object["Token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: token,
                              expiration: (object["Expiration"] as? String).flatMap(date))
    }

    /// A file's text without surrounding white space; nil with the reason when it cannot be read.
    static func file(_ path: String) -> Result<String, Unreadable> {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            return .failure(Unreadable(reason: "\(path) does not exist"))
        }
        guard !isFolder.boolValue, let data = FileManager.default.contents(atPath: path) else {
            return .failure(Unreadable(reason: "\(path) cannot be read"))
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? .failure(Unreadable(reason: "\(path) is empty")) : .success(text)
    }

    struct Unreadable: Error {
        var reason: String
    }
}
