import Foundation
public import HTTPCore

extension AWSCredentialsProvider {
    /// The chain every AWS SDK and Terraform follow ("Standardized credential providers" in the AWS
    /// SDKs and Tools Reference Guide): the environment's keys; web identity (`AWS_ROLE_ARN` and
    /// `AWS_WEB_IDENTITY_TOKEN_FILE`, as EKS sets them); the container endpoint (ECS, EKS Pod
    /// Identity); the shared `credentials` and `config` files' profile; the EC2 instance metadata
    /// service (IMDSv2). `region` names the regional STS endpoint.
    public static func standard(environment: [String: String], region: String, transport: any HTTPTransport) -> AWSCredentialsProvider {
        let variables = AWSVariables(environment)
        let sts = STSEndpoint(variables: variables, region: region)
        return AWSCredentialsProvider(sources: [
            EnvironmentCredentialSource(variables: variables),
            WebIdentityCredentialSource(environment: variables, sts: sts, transport: transport),
            ContainerCredentialSource(variables: variables, transport: transport),
            ProfileCredentialSource(files: SharedConfigFiles(variables: variables), sts: sts, transport: transport),
            InstanceMetadataCredentialSource(variables: variables, transport: transport),
        ])
    }
}

/// The process environment as the AWS SDKs read it: a variable set to white space only is unset.
struct AWSVariables: Sendable {
    let environment: [String: String]

    init(_ environment: [String: String]) {
        self.environment = environment
    }

    subscript(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    func first(_ names: String...) -> String? {
        names.lazy.compactMap { self[$0] }.first
    }
}

/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
struct EnvironmentCredentialSource: AWSCredentialSource {
    let variables: AWSVariables
    var name: String { "environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)" }

    func resolve() async -> AWSCredentialOutcome {
        switch (variables["AWS_ACCESS_KEY_ID"], variables["AWS_SECRET_ACCESS_KEY"]) {
        case (let id?, let secret?):
            .credentials(AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: variables["AWS_SESSION_TOKEN"]))
        case (nil, nil):
            .notConfigured("not set")
        case (nil, _?):
            .failed("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
        case (_?, nil):
            .failed("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        }
    }
}

/// Where STS is asked: `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`, else the regional endpoint
/// `https://sts.<region>.amazonaws.com`. Plain http only on loopback, as for the S3 endpoint.
struct STSEndpoint: Sendable {
    let url: Result<URL, CredentialAnswer.Unreadable>

    init(variables: AWSVariables, region: String) {
        guard let text = variables.first("AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL") else {
            url = .success(URL(string: "https://sts.\(region).amazonaws.com")!)
            return
        }
        let name = variables["AWS_ENDPOINT_URL_STS"] == nil ? "AWS_ENDPOINT_URL" : "AWS_ENDPOINT_URL_STS"
        guard let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty,
              scheme == "https" || scheme == "http", parsed.query == nil else {
            url = .failure(.init(reason: "\(name) '\(text)' is not an http(s) URL like https://sts.eu-west-1.amazonaws.com"))
            return
        }
        if scheme == "http", !S3Configuration.isLoopback(host) {
            url = .failure(.init(reason: "\(name) '\(text)' uses plain http:// on a non-loopback host; use https://"))
            return
        }
        url = .success(parsed)
    }
}
