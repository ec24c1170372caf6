import Foundation
import HTTPCore

/// The container credential endpoint of ECS and EKS Pod Identity: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`
/// (on 169.254.170.2) or `AWS_CONTAINER_CREDENTIALS_FULL_URI`, with the `Authorization` header from
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read again each time) or `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
/// A full URI must use https or name a loopback host or the ECS and EKS link-local addresses, as the
/// SDKs require. See "Container credential provider" in the AWS SDKs and Tools Reference Guide.
struct ContainerCredentialSource: AWSCredentialSource {
    let variables: AWSVariables
    let transport: any HTTPTransport
    var name: String { "container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_CONTAINER_CREDENTIALS_FULL_URI)" }

    /// ECS's address, EKS Pod Identity's IPv4 and IPv6 addresses.
    static let linkLocalHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23"]

    func resolve() async -> AWSCredentialOutcome {
        let url: URL
        switch endpoint() {
        case nil: return .notConfigured("not set")
        case .failure(let problem): return .failed(problem.reason)
        case .success(let found): url = found
        }
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        switch authorization() {
        case .failure(let problem): return .failed(problem.reason)
        case .success(let token?): headers.append(("Authorization", token))
        case .success(nil): break
        }
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers, connectTimeout: 2, timeout: 5))
        } catch {
            return .failed("\(url.host ?? "the endpoint") could not be reached (\(error.message))")
        }
        guard response.status == 200 else {
            return .failed("\(url.host ?? "the endpoint") answered HTTP \(response.status)")
        }
        guard let credentials = CredentialAnswer.json(response.body) else {
            return .failed("\(url.host ?? "the endpoint")'s answer holds no AccessKeyId and SecretAccessKey")
        }
        return .credentials(credentials)
    }

    /// The endpoint; nil when neither variable is set.
    func endpoint() -> Result<URL, CredentialAnswer.Unreadable>? {
        if let relative = variables["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] {
            let path = relative.hasPrefix("/") ? relative : "/" + relative
            guard let url = URL(string: "http://169.254.170.2" + path) else {
                return .failure(.init(reason: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI '\(relative)' is not a path"))
            }
            return .success(url)
        }
        guard let full = variables["AWS_CONTAINER_CREDENTIALS_FULL_URI"] else { return nil }
        guard let url = URL(string: full), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            return .failure(.init(reason: "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(full)' is not an http(s) URL"))
        }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        guard scheme == "https" || S3Configuration.isLoopback(bare) || Self.linkLocalHosts.contains(bare) else {
            return .failure(.init(reason: "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(full)' is refused: plain http is allowed only to a loopback host, 169.254.170.2, 169.254.170.23 or fd00:ec2::23; use https"))
        }
        return .success(url)
    }

    /// The `Authorization` value: the token file's text (read now), else the variable's; nil when neither is set.
    func authorization() -> Result<String?, CredentialAnswer.Unreadable> {
        var token = variables["AWS_CONTAINER_AUTHORIZATION_TOKEN"]
        if let path = variables["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] {
            switch CredentialAnswer.file(path) {
            case .success(let text): token = text
            case .failure(let problem): return .failure(.init(reason: "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: \(problem.reason)"))
            }
        }
        if let token, token.contains(where: { $0 == "\r" || $0 == "\n" }) {
            return .failure(.init(reason: "the container authorization token holds a line break"))
        }
        return .success(token)
    }
}
