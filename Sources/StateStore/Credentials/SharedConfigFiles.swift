import Foundation
import HTTPCore

/// The shared `credentials` and `config` files of the AWS CLI and SDKs: `AWS_SHARED_CREDENTIALS_FILE`
/// (default `~/.aws/credentials`, sections `[name]`) and `AWS_CONFIG_FILE` (default `~/.aws/config`,
/// sections `[profile name]` and `[default]`); the profile is `AWS_PROFILE`, default `default`. A
/// setting in the credentials file wins over the same one in the config file.
/// See "Shared config and credentials files" in the AWS SDKs and Tools Reference Guide.
struct SharedConfigFiles: Sendable {
    let profile: String
    /// Whether `AWS_PROFILE` names the profile (then a missing one is an error, not a skipped source).
    let profileChosen: Bool
    let credentialsPath: String?
    let configPath: String?

    init(variables: AWSVariables) {
        profile = variables.first("AWS_PROFILE", "AWS_DEFAULT_PROFILE") ?? "default"
        profileChosen = variables.first("AWS_PROFILE", "AWS_DEFAULT_PROFILE") != nil
        let home = variables["HOME"]
        credentialsPath = variables["AWS_SHARED_CREDENTIALS_FILE"] ?? home.map { $0 + "/.aws/credentials" }
        configPath = variables["AWS_CONFIG_FILE"] ?? home.map { $0 + "/.aws/config" }
    }

    /// The profile's settings from both files; nil when neither file has it.
    func settings() -> [String: String]? {
        let config = configPath.flatMap(Self.read).map { Self.sections($0, config: true) }?[profile]
        let credentials = credentialsPath.flatMap(Self.read).map { Self.sections($0, config: false) }?[profile]
        guard config != nil || credentials != nil else { return nil }
        return (config ?? [:]).merging(credentials ?? [:]) { _, fromCredentials in fromCredentials }
    }

    var paths: String {
        [credentialsPath, configPath].compactMap { $0 }.joined(separator: " and ")
    }

    private static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The settings of each profile: `key = value` lines under `[name]` (in the config file,
    /// `[profile name]`, and `[default]`). Comments start with `#` or `;`; indented lines belong to a
    /// nested setting (`s3 =`) this tool does not read.
    static func sections(_ text: String, config: Bool) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                var name = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if config, name.hasPrefix("profile ") {
                    name = name.dropFirst("profile ".count).trimmingCharacters(in: .whitespaces)
                } else if config, name != "default" {
                    current = nil
                    continue
                }
                current = name
                continue
            }
            guard let profile = current, line.first != " " && line.first != "\t", let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if sections[profile, default: [:]][key] == nil { sections[profile, default: [:]][key] = value }
        }
        return sections
    }
}

/// The shared files' profile: its static keys (`aws_access_key_id`, `aws_secret_access_key`,
/// `aws_session_token`), or a role assumed with a web identity token (`role_arn`,
/// `web_identity_token_file`, `role_session_name`).
struct ProfileCredentialSource: AWSCredentialSource {
    let files: SharedConfigFiles
    let sts: STSEndpoint
    let transport: any HTTPTransport
    var name: String { "shared files' profile '\(files.profile)' (AWS_PROFILE)" }

    func resolve() async -> AWSCredentialOutcome {
        guard let settings = files.settings() else {
            let reason = files.paths.isEmpty ? "HOME is not set" : "no profile '\(files.profile)' in \(files.paths)"
            return files.profileChosen ? .failed(reason) : .notConfigured(reason)
        }
        func value(_ key: String) -> String? { settings[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let id = value("aws_access_key_id"), let secret = value("aws_secret_access_key") {
            return .credentials(AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: value("aws_session_token")))
        }
        if let arn = value("role_arn") {
            guard let tokenFile = value("web_identity_token_file") else {
                return .failed("the profile's role_arn needs web_identity_token_file here; source_profile and credential_source are not supported")
            }
            let role = WebIdentityCredentialSource.Role(roleArn: arn, tokenFile: tokenFile, sessionName: value("role_session_name"))
            return await WebIdentityCredentialSource(role: role, sts: sts, transport: transport).resolve()
        }
        if value("credential_process") != nil {
            return .failed("credential_process is not supported; export the keys it prints, or use another source")
        }
        if settings.keys.contains(where: { $0.hasPrefix("sso_") }) {
            return .failed("IAM Identity Center (sso_*) profiles are not supported; run `aws configure export-credentials --format env` and export the keys")
        }
        return .failed("the profile has neither aws_access_key_id and aws_secret_access_key nor role_arn and web_identity_token_file")
    }
}
