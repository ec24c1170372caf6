import Foundation
import HTTPCore

/// The EC2 instance metadata service, IMDSv2: a session token from `PUT /latest/api/token`, then the
/// instance profile's role name and its credentials. `AWS_EC2_METADATA_SERVICE_ENDPOINT` moves it,
/// `AWS_EC2_METADATA_DISABLED=true` skips it; one-second timeouts, so a machine without it fails fast.
/// See "IMDS credential provider" in the AWS SDKs and Tools Reference Guide.
struct InstanceMetadataCredentialSource: AWSCredentialSource {
    let variables: AWSVariables
    let transport: any HTTPTransport
    var name: String { "EC2 instance metadata (IMDSv2)" }

    func resolve() async -> AWSCredentialOutcome {
        if variables["AWS_EC2_METADATA_DISABLED"]?.lowercased() == "true" {
            return .notConfigured("AWS_EC2_METADATA_DISABLED is true")
        }
        let text = variables["AWS_EC2_METADATA_SERVICE_ENDPOINT"] ?? "http://169.254.169.254"
        guard var base = URL(string: text)?.absoluteString, let scheme = URL(string: text)?.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            return .failed("AWS_EC2_METADATA_SERVICE_ENDPOINT '\(text)' is not an http(s) URL")
        }
        while base.hasSuffix("/") { base.removeLast() }
        let host = URL(string: base)?.host ?? base
        let session = await ask(base, "/latest/api/token", method: "PUT", headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")])
        guard case .success(let token) = session else {
            return .failed(Self.reason(session, host: host, asking: "a session token"))
        }
        let tokenHeader = [(name: "X-aws-ec2-metadata-token", value: token)]
        let roles = await ask(base, "/latest/meta-data/iam/security-credentials/", headers: tokenHeader)
        guard case .success(let list) = roles else {
            return .failed(Self.reason(roles, host: host, asking: "the instance profile's role"))
        }
        guard let role = list.split(whereSeparator: \.isNewline).first.map(String.init), !role.isEmpty else {
            return .failed("the instance at \(host) has no instance profile role")
        }
        let answer = await ask(base, "/latest/meta-data/iam/security-credentials/" + role, headers: tokenHeader)
        guard case .success(let body) = answer else {
            return .failed(Self.reason(answer, host: host, asking: "the role's credentials"))
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        if let code = object?["Code"] as? String, code != "Success" {
            return .failed("the instance metadata service at \(host) reports \(code) for the role's credentials")
        }
        guard let credentials = CredentialAnswer.json(Data(body.utf8)) else {
            return .failed("the instance metadata service at \(host) answered without credentials")
        }
        return .credentials(credentials)
    }

    private enum Asked {
        case success(String)
        case status(Int)
        case unreachable(String)
    }

    private func ask(_ base: String, _ path: String, method: String = "GET", headers: [(name: String, value: String)]) async -> Asked {
        guard let url = URL(string: base + path) else { return .unreachable("bad URL") }
        do {
            let response = try await transport.send(HTTPRequest(method: method, url: url, headers: headers, connectTimeout: 1, timeout: 1))
            guard response.status == 200 else { return .status(response.status) }
            return .success(String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            return .unreachable(error.kind.rawValue)
        }
    }

    private static func reason(_ asked: Asked, host: String, asking what: String) -> String {
        switch asked {
        case .unreachable(let why): "no instance metadata service answered at \(host) (\(why))"
        case .status(let status): "the instance metadata service at \(host) answered HTTP \(status) when asked for \(what)"
        case .success: ""
        }
    }
}
