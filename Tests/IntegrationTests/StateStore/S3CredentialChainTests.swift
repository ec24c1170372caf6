import Foundation
import HTTPCore
import StateLocations
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

/// The credential chain end to end: each source alone reads and writes the state in moto (which
/// checks every signature, and an assumed role's session token), the order the sources are asked
/// in, refreshing before expiry, and the one error when no source has credentials.
@Suite("S3 credentials from the AWS SDKs' chain, against moto", .serialized)
struct S3CredentialChainTests {
    typealias Support = StateStoreTestSupport

    /// A fresh moto with a role, a folder for token and config files (HOME too, so no real
    /// `~/.aws` is read), stopped and removed afterwards.
    func withServer(_ body: (MotoServer, URL) async throws -> Void) async throws {
        let server = try await MotoServer.start(roles: true)
        let folder = try temporaryFolder("credential-chain")
        defer {
            server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        try await body(server, folder)
    }

    /// The S3 endpoint and region, and no other AWS setting: each test adds the one source it means.
    func environment(_ server: MotoServer, home: URL, imds: Bool = false) -> [String: String] {
        var environment = ["AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": server.endpoint.absoluteString, "HOME": home.path]
        if !imds { environment["AWS_EC2_METADATA_DISABLED"] = "true" }
        return environment
    }

    func store(_ server: MotoServer, _ environment: [String: String], key: String = "credentials") throws -> any StateDocumentStore {
        let location = try StateLocation.parse("s3://\(server.bucket)/\(key)", relativeTo: URL(fileURLWithPath: "/"))
        return try StateStores.open(location, owner: Support.sandbox, environment: environment, transport: MotoServer.client)
    }

    /// A store whose provider asks the standard chain's sources, refreshing `margin` seconds before expiry.
    func store(_ server: MotoServer, _ environment: [String: String], refreshMargin margin: Double, retryDelay: Double = 30) -> S3StateStore {
        let standard = AWSCredentialsProvider.standard(environment: environment, region: "us-east-1", transport: MotoServer.client)
        let provider = AWSCredentialsProvider(sources: standard.sources, refreshMargin: margin, retryDelay: retryDelay)
        return S3StateStore(bucket: server.bucket, key: "credentials/sandbox.json", owner: Support.sandbox,
                            configuration: S3Configuration(credentials: provider, region: "us-east-1", endpoint: server.endpoint),
                            transport: MotoServer.client)
    }

    /// Writes a document and reads it back: both requests signed with the chain's credentials.
    func writesAndReads(_ store: any StateDocumentStore) async throws {
        let document = try Support.document(for: Support.sandbox)
        let version = try await store.write(document, condition: .createOnly)
        let read = try await store.read()
        #expect(read.document == (try document.sealed()))
        #expect(read.version == version)
    }

    func write(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file)
    }

    @Test("a pod with a web identity token reads and writes the state in S3")
    func webIdentity() async throws {
        try await withServer { server, folder in
            let sts = try STSGateway(moto: server)
            defer { sts.stop() }
            let tokenFile = folder.appendingPathComponent("token")
            try write("eyJ.first-token.sig\n", to: tokenFile)
            var environment = environment(server, home: folder)
            environment["AWS_ROLE_ARN"] = server.roleArn
            environment["AWS_WEB_IDENTITY_TOKEN_FILE"] = tokenFile.path
            environment["AWS_ROLE_SESSION_NAME"] = "reconcile-job"
            environment["AWS_ENDPOINT_URL_STS"] = sts.url.absoluteString

            try await writesAndReads(try store(server, environment))
            #expect(sts.calls.count == 1)
            #expect(sts.calls.first?["Action"] == "AssumeRoleWithWebIdentity")
            #expect(sts.calls.first?["RoleArn"] == server.roleArn)
            #expect(sts.calls.first?["RoleSessionName"] == "reconcile-job")
            #expect(sts.calls.first?["WebIdentityToken"] == "eyJ.first-token.sig")
        }
    }

    @Test("the web identity token file is read again at each refresh, as EKS rotates it")
    func webIdentityTokenRotation() async throws {
        try await withServer { server, folder in
            let sts = try STSGateway(moto: server)
            defer { sts.stop() }
            let tokenFile = folder.appendingPathComponent("token")
            try write("first-token", to: tokenFile)
            var environment = environment(server, home: folder)
            environment["AWS_ROLE_ARN"] = server.roleArn
            environment["AWS_WEB_IDENTITY_TOKEN_FILE"] = tokenFile.path
            environment["AWS_ENDPOINT_URL_STS"] = sts.url.absoluteString
            // moto's credentials last an hour; a margin longer than that refreshes at every request.
            let store = store(server, environment, refreshMargin: 7200)

            _ = try await store.read()
            try write("rotated-token", to: tokenFile)
            _ = try await store.read()
            #expect(sts.calls.map { $0["WebIdentityToken"] } == ["first-token", "rotated-token"])
        }
    }

    @Test("an ECS task or an EKS pod reads and writes the state with its container credentials")
    func containerCredentials() async throws {
        try await withServer { server, folder in
            let role = try await server.assumeRole(session: "container")
            let endpoint = try CredentialEndpoint(.container(authorization: "pod-identity-token-1"), answers: [.credentials(role, expiresIn: 3600)])
            defer { endpoint.stop() }
            let tokenFile = folder.appendingPathComponent("eks-pod-identity-token")
            try write("pod-identity-token-1\n", to: tokenFile)
            var environment = environment(server, home: folder)
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = endpoint.url.absoluteString + "/v1/credentials"
            environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = tokenFile.path

            // The role's temporary credentials pass moto's checks only with their session token.
            try await writesAndReads(try store(server, environment))
            #expect(endpoint.calls.map(\.path) == ["/v1/credentials"])
            #expect(endpoint.calls.first?.authorization == "pod-identity-token-1")
        }
    }

    @Test("the container authorization token file is read again at each refresh")
    func containerTokenRotation() async throws {
        try await withServer { server, folder in
            let endpoint = try CredentialEndpoint(.container(authorization: "first"), answers: [.credentials(server.writer, expiresIn: 3600)])
            defer { endpoint.stop() }
            let tokenFile = folder.appendingPathComponent("token")
            try write("first", to: tokenFile)
            var environment = environment(server, home: folder)
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = endpoint.url.absoluteString + "/v1/credentials"
            environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = tokenFile.path
            let store = store(server, environment, refreshMargin: 7200)

            _ = try await store.read()
            try write("second", to: tokenFile)
            endpoint.expect(authorization: "second")
            _ = try await store.read()
            #expect(endpoint.calls.map(\.authorization) == ["first", "second"])
        }
    }

    @Test("an EC2 instance reads and writes the state with its instance profile's credentials (IMDSv2)")
    func instanceMetadata() async throws {
        try await withServer { server, folder in
            let role = try await server.assumeRole(session: "instance")
            let imds = try CredentialEndpoint(.instanceMetadata, answers: [.credentials(role, expiresIn: 3600)])
            defer { imds.stop() }
            var environment = environment(server, home: folder, imds: true)
            environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds.url.absoluteString

            try await writesAndReads(try store(server, environment))
            #expect(imds.calls.map { "\($0.method) \($0.path)" } == [
                "PUT /latest/api/token", "GET /latest/meta-data/iam/security-credentials/",
                "GET /latest/meta-data/iam/security-credentials/\(CredentialEndpoint.roleName)",
            ])
        }
    }

    @Test("a developer's profile in the shared files reads and writes the state, keys or web identity role")
    func sharedFiles() async throws {
        try await withServer { server, folder in
            let sts = try STSGateway(moto: server)
            defer { sts.stop() }
            let tokenFile = folder.appendingPathComponent("token")
            try write("profile-token", to: tokenFile)
            let credentials = folder.appendingPathComponent("credentials")
            try write("[default]\naws_access_key_id = AKIAWRONGDEFAULT0000\naws_secret_access_key = wrong\n\n[ci]\naws_access_key_id = \(server.writer.accessKeyId)\naws_secret_access_key = \(server.writer.secretAccessKey)\n", to: credentials)
            let config = folder.appendingPathComponent("config")
            try write("[default]\nregion = us-east-1\n\n# assumed with the CI's OIDC token\n[profile deploy]\nrole_arn = \(server.roleArn)\nweb_identity_token_file = \(tokenFile.path)\nrole_session_name = deploy-session\nregion = us-east-1\n", to: config)
            var environment = environment(server, home: folder)
            environment["AWS_SHARED_CREDENTIALS_FILE"] = credentials.path
            environment["AWS_CONFIG_FILE"] = config.path
            environment["AWS_ENDPOINT_URL_STS"] = sts.url.absoluteString

            environment["AWS_PROFILE"] = "ci"
            try await writesAndReads(try store(server, environment, key: "keys"))
            #expect(sts.calls.isEmpty)

            environment["AWS_PROFILE"] = "deploy"
            try await writesAndReads(try store(server, environment, key: "role"))
            #expect(sts.calls.map { $0["RoleSessionName"] } == ["deploy-session"])
            #expect(sts.calls.map { $0["WebIdentityToken"] } == ["profile-token"])
        }
    }

    @Test("the region comes from the profile when AWS_REGION is unset")
    func regionFromProfile() throws {
        let folder = try temporaryFolder("credential-chain-region")
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config")
        try write("[default]\nregion = eu-west-1\n[profile paris]\nregion = eu-west-3\n", to: config)
        let environment = ["AWS_CONFIG_FILE": config.path, "HOME": folder.path]
        #expect(try S3Configuration.fromEnvironment(environment, store: "s3://x/y").region == "eu-west-1")
        #expect(try S3Configuration.fromEnvironment(environment.merging(["AWS_PROFILE": "paris"]) { $1 }, store: "s3://x/y").region == "eu-west-3")
        #expect(try S3Configuration.fromEnvironment(environment.merging(["AWS_PROFILE": "paris", "AWS_REGION": "us-west-2"]) { $1 }, store: "s3://x/y").region == "us-west-2")
    }
}
