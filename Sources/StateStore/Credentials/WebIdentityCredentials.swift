import Basics
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPCore

/// A role assumed with a web identity token (an EKS service account's, a CI's OIDC token) through
/// STS `AssumeRoleWithWebIdentity`, an unsigned call: the token is the proof. The token file is read
/// again on every refresh, since the platform rotates it.
/// See "Assume role with web identity" in the AWS SDKs and Tools Reference Guide.
struct WebIdentityCredentialSource: AWSCredentialSource {
    struct Role: Sendable {
        var roleArn: String
        var tokenFile: String
        var sessionName: String?
    }

    /// The role, or why none is set up (nil: nothing set, so the source is skipped).
    let role: Result<Role, CredentialAnswer.Unreadable>?
    let sts: STSEndpoint
    let transport: any HTTPTransport
    var name: String { "web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE)" }

    init(environment variables: AWSVariables, sts: STSEndpoint, transport: any HTTPTransport) {
        switch (variables["AWS_ROLE_ARN"], variables["AWS_WEB_IDENTITY_TOKEN_FILE"]) {
        case (let arn?, let file?): role = .success(Role(roleArn: arn, tokenFile: file, sessionName: variables["AWS_ROLE_SESSION_NAME"]))
        case (nil, nil): role = nil
        case (nil, _?): role = .failure(.init(reason: "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not"))
        case (_?, nil): role = .failure(.init(reason: "AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not"))
        }
        self.sts = sts
        self.transport = transport
    }

    init(role: Role, sts: STSEndpoint, transport: any HTTPTransport) {
        self.role = .success(role)
        self.sts = sts
        self.transport = transport
    }

    func resolve() async -> AWSCredentialOutcome {
        switch role {
        case nil: return .notConfigured("not set")
        case .failure(let problem): return .failed(problem.reason)
        case .success(let role): return await assume(role)
        }
    }

    private func assume(_ role: Role) async -> AWSCredentialOutcome {
        let endpoint: URL
        switch sts.url {
        case .success(let url): endpoint = url
        case .failure(let problem): return .failed(problem.reason)
        }
        let token: String
        switch CredentialAnswer.file(role.tokenFile) {
        case .success(let text): token = text
        case .failure(let problem): return .failed("the web identity token file \(problem.reason)")
        }
        let session = role.sessionName ?? "retention-sync-\(UTCTime(now: SystemClock()).milliseconds / 1000)"
        let form = [("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", role.roleArn),
                    ("RoleSessionName", session), ("WebIdentityToken", token)]
            .map { "\($0.0)=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        let request = HTTPRequest(method: "POST", url: endpoint,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"), ("Accept", "application/xml")],
                                  body: Data(form.utf8), connectTimeout: 5, timeout: 30)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            return .failed("STS at \(endpoint.host ?? endpoint.absoluteString) could not be reached (\(error.message))")
        }
        let answer = STSAnswer(response.body)
        guard response.status == 200 else {
            let detail = [answer.errorCode, answer.errorMessage].compactMap { $0 }.joined(separator: ": ")
            return .failed("STS refused AssumeRoleWithWebIdentity for \(role.roleArn) (HTTP \(response.status)\(detail.isEmpty ? "" : " \(detail)"))")
        }
        guard let credentials = answer.credentials else {
            return .failed("STS's answer for \(role.roleArn) holds no credentials")
        }
        return .credentials(credentials)
    }

    /// `application/x-www-form-urlencoded`: everything but the unreserved characters escaped.
    static func formEncoded(_ value: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

/// The elements of STS's XML answer this tool reads: `Credentials` (`AccessKeyId`,
/// `SecretAccessKey`, `SessionToken`, `Expiration`), or an error's `Code` and `Message`.
struct STSAnswer {
    private(set) var values: [String: String] = [:]

    init(_ body: Data) {
        let reader = Reader()
        let parser = XMLParser(data: body)
        parser.delegate = reader
        _ = parser.parse()
        values = reader.values
    }

    var credentials: AWSCredentials? {
        guard let id = values["AccessKeyId"], let secret = values["SecretAccessKey"] else { return nil }
        return AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: values["SessionToken"],
                              expiration: values["Expiration"].flatMap(CredentialAnswer.date))
    }

    var errorCode: String? { values["Code"] }
    /// At most 300 characters of STS's message.
    var errorMessage: String? { values["Message"].map { String($0.prefix(300)) } }

    /// Collects the text of the few elements read; the first of each name wins.
    private final class Reader: NSObject, XMLParserDelegate {
        static let wanted: Set<String> = ["AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration", "Code", "Message"]
        var values: [String: String] = [:]
        private var element: String?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            element = Self.wanted.contains(elementName) && values[elementName] == nil ? elementName : nil
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if element != nil { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            if let element, element == elementName {
                let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if !value.isEmpty { values[element] = value }
            }
            element = nil
        }
    }
}
