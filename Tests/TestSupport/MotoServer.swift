public import Foundation
public import HTTPClient
public import HTTPCore
import Crypto

/// moto's S3-compatible server (installed by `.ci/setup --test` into `.build/tools`), started on a free
/// loopback port for one test and stopped by its process id.
///
/// With authentication on, moto checks every SigV4 signature and evaluates IAM policies; the first
/// few requests are let through unauthenticated so the test can create its users and bucket.
public final class MotoServer: Sendable {
    public struct Identity: Sendable {
        public var accessKeyId: String
        public var secretAccessKey: String
        /// Temporary credentials' token (an assumed role's).
        public var sessionToken: String?

        public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyId = accessKeyId
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    public let process: Process
    public let endpoint: URL
    /// May read and write the bucket (what `apply` needs).
    public var writer: Identity { identities.value.writer }
    /// May only read (what `plan` needs).
    public var reader: Identity { identities.value.reader }
    /// The reconcile job's identity when it also compacts and erases events: apply's, and s3:DeleteObject.
    public var maintainer: Identity { maintainerIdentity.value }
    private let maintainerIdentity = Locked(Identity(accessKeyId: "", secretAccessKey: ""))
    /// Made by `provision`, after the server has started.
    private let identities = Locked((writer: Identity(accessKeyId: "", secretAccessKey: ""), reader: Identity(accessKeyId: "", secretAccessKey: "")))
    public let bucket = "retention-state"
    /// With `roles`: a role whose policy is the writer's (assumed through STS, its temporary
    /// credentials read and write the bucket), and an identity that may call STS for it.
    private let role = Locked((arn: "", stsCaller: Identity(accessKeyId: "", secretAccessKey: "")))
    public var roleArn: String { role.value.arn }
    private let stderr: Pipe

    public static var executable: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(".build/tools/bin/moto_server")
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts the server with authentication, a bucket, a writer and a read-only identity.
    /// With `versioning`, the bucket keeps object versions and the writer may list and read them.
    /// With `roles`, also the role `roleArn` and an identity that may assume it (`assumeRole`, `forwardSTS`).
    public static func start(versioning: Bool = false, roles: Bool = false) async throws -> MotoServer {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw Unavailable(description: "\(executable.path) is missing: run `bash .ci/setup --test` (it installs moto[server] into .build/tools)")
        }
        // Starting moto waits seconds for it to print its port: not on the concurrency pool.
        let server = try await onOwnThread { try MotoServer() }
        do {
            try await server.provision(versioning: versioning)
            if roles { try await server.provisionRole() }
            try await server.requireAuthentication()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// Moto starts without authentication, so that provisioning needs no identity; `start` turns it on
    /// once the identities exist. (A fixed count of unauthenticated requests, moto's other way, was
    /// spent by any request that reached the new server first — a client of an earlier test retrying
    /// against the port the kernel handed out again — and provisioning then failed with
    /// InvalidClientTokenId.)
    private init() throws {
        process = Process()
        process.executableURL = Self.executable
        // Port 0: the kernel picks a free port, and the server prints which one it got.
        process.arguments = ["-H", "127.0.0.1", "-p", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = nil
        environment["MOTO_ALLOW_NONEXISTENT_REGION"] = "true"
        for name in environment.keys where name.hasPrefix("AWS_") { environment[name] = nil }
        process.environment = environment
        stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()

        // Reads the server's own report of its address, for at most 60 s.
        let deadline = Date().addingTimeInterval(60)
        var text = ""
        var port: Int?
        let handle = stderr.fileHandleForReading
        while port == nil, Date() < deadline, process.isRunning {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: "Running on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if text[range.upperBound...].count > digits.count { port = Int(digits) }
            }
        }
        guard let port else {
            process.terminate()
            process.waitUntilExit()
            throw Unavailable(description: "moto did not report its port: \(text.suffix(500))")
        }
        endpoint = URL(string: "http://127.0.0.1:\(port)")!
        // Keeps draining the log so the server never blocks on a full pipe.
        handle.readabilityHandler = { handle in _ = handle.availableData }
    }

    public func stop() {
        stderr.fileHandleForReading.readabilityHandler = nil
        // SIGKILL, because a child spawned from a thread of the test runner inherits a signal mask
        // that can block SIGTERM; moto keeps nothing that needs a clean shutdown.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        // A bounded wait, never waitUntilExit: stop runs on one of the concurrency pool's few threads
        // (a test's defer), and a wait that never returned once held two of them and hung the suite.
        for _ in 0..<500 where process.isRunning { usleep(10_000) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The environment a command or `StateStores.open` reads: the endpoint and one identity.
    public func environment(_ identity: Identity, region: String = "us-east-1") -> [String: String] {
        ["AWS_ACCESS_KEY_ID": identity.accessKeyId, "AWS_SECRET_ACCESS_KEY": identity.secretAccessKey,
         "AWS_REGION": region, "AWS_ENDPOINT_URL_S3": endpoint.absoluteString]
    }

    /// The README's least-privilege policies: apply reads and writes, plan only reads.
    /// `versions` adds what reading a versioned bucket's history needs.
    public static func policy(write: Bool, bucket: String, versions: Bool = false) -> String {
        let objectActions = write ? (versions ? #"["s3:GetObject","s3:PutObject","s3:GetObjectVersion"]"# : #"["s3:GetObject","s3:PutObject"]"#)
            : #"["s3:GetObject"]"#
        let bucketActions = versions ? #"["s3:ListBucket","s3:GetBucketVersioning","s3:ListBucketVersions","s3:PutBucketVersioning"]"# : #"["s3:ListBucket"]"#
        return #"{"Version":"2012-10-17","Statement":["#
            + #"{"Effect":"Allow","Action":"# + bucketActions + #","Resource":"arn:aws:s3:::"# + bucket + #""},"#
            + #"{"Effect":"Allow","Action":"# + objectActions + #","Resource":"arn:aws:s3:::"# + bucket + #"/*"}]}"#
    }

    private func provision(versioning: Bool) async throws {
        let writer = try await createUser("apply", policy: Self.policy(write: true, bucket: bucket, versions: versioning))
        let reader = try await createUser("plan", policy: Self.policy(write: false, bucket: bucket))
        identities.set((writer: writer, reader: reader))
        maintainerIdentity.set(try await createUser("upkeep", policy: Self.policy(write: true, bucket: bucket).replacingOccurrences(
            of: #""s3:PutObject"]"#, with: #""s3:PutObject","s3:DeleteObject"]"#)))
        let response = try await send(HTTPRequest(method: "PUT", url: endpoint.appendingPathComponent(bucket),
                                                  headers: [("x-amz-content-sha256", Self.emptyHash)],
                                                  awsSigV4: signing(service: "s3", Identity(accessKeyId: "setup", secretAccessKey: "setup"))))
        guard response.status == 200 else { throw Unavailable(description: "moto refused CreateBucket: HTTP \(response.status)") }
        guard versioning else { return }
        let body = Data(#"<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>"#.utf8)
        let enabled = try await send(HTTPRequest(method: "PUT", url: URL(string: "\(endpoint.absoluteString)/\(bucket)?versioning=")!,
                                                 headers: [("Content-Type", "application/xml"), ("x-amz-content-sha256", Self.sha256Hex(body))],
                                                 body: body, awsSigV4: signing(service: "s3", writer)))
        guard enabled.status == 200 else { throw Unavailable(description: "moto refused PutBucketVersioning: HTTP \(enabled.status) \(String(decoding: enabled.body.prefix(300), as: UTF8.self))") }
    }

    private func provisionRole() async throws {
        let trust = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::123456789012:oidc-provider/oidc.example"},"Action":"sts:AssumeRoleWithWebIdentity"}]}"#
        let created = try await iam(["Action": "CreateRole", "RoleName": "state-writer", "AssumeRolePolicyDocument": trust])
        _ = try await iam(["Action": "PutRolePolicy", "RoleName": "state-writer", "PolicyName": "state",
                           "PolicyDocument": Self.policy(write: true, bucket: bucket)])
        guard let arn = Self.element("Arn", in: created) else {
            throw Unavailable(description: "moto's CreateRole answer has no Arn: \(created.prefix(300))")
        }
        let caller = try await createUser("sts", policy: #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:*","Resource":"*"}]}"#)
        role.set((arn: arn, stsCaller: caller))
    }

    /// Sends an STS query-API form (as the tool sends it, unsigned) to moto, signed by the identity
    /// that may call STS: moto checks every request's signature, AWS does not for
    /// AssumeRoleWithWebIdentity, whose token is the proof.
    public func forwardSTS(_ form: Data) async throws -> HTTPResponse {
        try await send(HTTPRequest(method: "POST", url: endpoint.appendingPathComponent("/"),
                                   headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                   body: form, awsSigV4: signing(service: "sts", role.value.stsCaller)))
    }

    /// Temporary credentials of `roleArn` (with their session token), as a container endpoint or the
    /// instance metadata service hands them out; asked for the way web identity asks (moto checks
    /// no token).
    public func assumeRole(session: String) async throws -> Identity {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let form = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=\(roleArn.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")&RoleSessionName=\(session)&WebIdentityToken=test"
        let response = try await forwardSTS(Data(form.utf8))
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200, let id = Self.element("AccessKeyId", in: text), let secret = Self.element("SecretAccessKey", in: text),
              let token = Self.element("SessionToken", in: text) else {
            throw Unavailable(description: "moto refused AssumeRoleWithWebIdentity: HTTP \(response.status) \(text.prefix(300))")
        }
        return Identity(accessKeyId: id, secretAccessKey: secret, sessionToken: token)
    }

    /// From now on every request must be signed by an identity moto knows, with a policy allowing it.
    private func requireAuthentication() async throws {
        let response = try await send(HTTPRequest(method: "POST", url: endpoint.appendingPathComponent("moto-api/reset-auth"),
                                                  body: Data("0".utf8)))
        guard response.status == 200 else {
            throw Unavailable(description: "moto refused to turn authentication on: HTTP \(response.status) \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
    }

    private func createUser(_ name: String, policy: String) async throws -> Identity {
        _ = try await iam(["Action": "CreateUser", "UserName": name])
        let key = try await iam(["Action": "CreateAccessKey", "UserName": name])
        _ = try await iam(["Action": "PutUserPolicy", "UserName": name, "PolicyName": "state", "PolicyDocument": policy])
        guard let id = Self.element("AccessKeyId", in: key), let secret = Self.element("SecretAccessKey", in: key) else {
            throw Unavailable(description: "moto's CreateAccessKey answer has no key: \(key.prefix(300))")
        }
        return Identity(accessKeyId: id, secretAccessKey: secret)
    }

    private func iam(_ parameters: [String: String]) async throws -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let form = (parameters.merging(["Version": "2010-05-08"]) { first, _ in first })
            .sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
        let response = try await send(HTTPRequest(method: "POST", url: endpoint.appendingPathComponent("/"),
                                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                  body: Data(form.utf8),
                                                  awsSigV4: signing(service: "iam", Identity(accessKeyId: "setup", secretAccessKey: "setup"))))
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200 else { throw Unavailable(description: "moto refused \(parameters["Action"] ?? ""): \(text.prefix(300))") }
        return text
    }

    /// A raw signed object request, for planting bytes the store itself would never write.
    public func putObject(key: String, body: Data, as identity: Identity) async throws -> HTTPResponse {
        try await send(HTTPRequest(method: "PUT", url: URL(string: "\(endpoint.absoluteString)/\(bucket)/\(key)")!,
                                   headers: [("Content-Type", "application/json"),
                                             ("x-amz-content-sha256", Self.sha256Hex(body))],
                                   body: body, awsSigV4: signing(service: "s3", identity)))
    }

    private func signing(service: String, _ identity: Identity) -> AWSSigV4Signing {
        AWSSigV4Signing(region: "us-east-1", service: service, accessKeyId: identity.accessKeyId,
                        secretAccessKey: identity.secretAccessKey)
    }

    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await MotoServer.client.send(request)
    }

    public static let client = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 30, environment: [:]))

    public static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public static func sha256Hex(_ data: Data) -> String {
        Digest.sha256Hex(Array(data))
    }

    public static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        return String(text[start.upperBound..<end.lowerBound])
    }
}
