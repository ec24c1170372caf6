import Foundation
import HTTPCore
import StateLocations
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

/// The order of the sources, refreshing temporary credentials, and what is said when none works.
extension S3CredentialChainTests {
    @Test("the sources are asked in the SDKs' order: environment, web identity, container, shared files, instance metadata")
    func order() async throws {
        try await withServer { server, folder in
            let sts = try STSGateway(moto: server)
            let container = try CredentialEndpoint(.container(authorization: nil), answers: [.credentials(server.writer, expiresIn: 3600)])
            let imds = try CredentialEndpoint(.instanceMetadata, answers: [.credentials(server.writer, expiresIn: 3600)])
            defer { sts.stop(); container.stop(); imds.stop() }
            let tokenFile = folder.appendingPathComponent("token")
            try write("token", to: tokenFile)
            let credentials = folder.appendingPathComponent("credentials")
            try write("[default]\naws_access_key_id = \(server.writer.accessKeyId)\naws_secret_access_key = \(server.writer.secretAccessKey)\n", to: credentials)
            var environment = environment(server, home: folder, imds: true)
            environment.merge(["AWS_ACCESS_KEY_ID": server.writer.accessKeyId, "AWS_SECRET_ACCESS_KEY": server.writer.secretAccessKey,
                               "AWS_ROLE_ARN": server.roleArn, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path,
                               "AWS_ENDPOINT_URL_STS": sts.url.absoluteString,
                               "AWS_CONTAINER_CREDENTIALS_FULL_URI": container.url.absoluteString + "/credentials",
                               "AWS_SHARED_CREDENTIALS_FILE": credentials.path,
                               "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.url.absoluteString]) { $1 }
            func asked() -> [Int] { [sts.calls.count, container.calls.count, imds.calls.count] }

            try await writesAndReads(try store(server, environment, key: "environment"))
            #expect(asked() == [0, 0, 0])
            environment["AWS_ACCESS_KEY_ID"] = nil
            environment["AWS_SECRET_ACCESS_KEY"] = nil
            try await writesAndReads(try store(server, environment, key: "web-identity"))
            #expect(asked() == [1, 0, 0])
            environment["AWS_ROLE_ARN"] = nil
            environment["AWS_WEB_IDENTITY_TOKEN_FILE"] = nil
            try await writesAndReads(try store(server, environment, key: "container"))
            #expect(asked() == [1, 1, 0])
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = nil
            try await writesAndReads(try store(server, environment, key: "files"))
            #expect(asked() == [1, 1, 0])
            environment["AWS_SHARED_CREDENTIALS_FILE"] = nil
            try await writesAndReads(try store(server, environment, key: "instance"))
            #expect(asked() == [1, 1, 3])
        }
    }

    @Test("temporary credentials are refreshed five minutes before they expire, once for requests arriving together")
    func refreshBeforeExpiry() async throws {
        try await withServer { server, folder in
            // Expiring in five minutes and twelve seconds: good for twelve seconds (a first write and read on a busy machine fit), then due for a refresh.
            let endpoint = try CredentialEndpoint(.container(authorization: nil), answers: [
                .credentials(server.writer, expiresIn: 312), .credentials(server.writer, expiresIn: 3600),
            ])
            defer { endpoint.stop() }
            var environment = environment(server, home: folder)
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = endpoint.url.absoluteString + "/credentials"
            let store = try store(server, environment)

            try await writesAndReads(store)
            #expect(endpoint.credentialCalls == 1)
            try await Task.sleep(for: .milliseconds(12_500))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { _ = try await store.read() } }
                try await group.waitForAll()
            }
            #expect(endpoint.credentialCalls == 2)
            _ = try await store.read()
            #expect(endpoint.credentialCalls == 2)
        }
    }

    @Test("a refresh that fails keeps the credentials still valid, and is tried again later")
    func failedRefreshKeepsValidCredentials() async throws {
        try await withServer { server, folder in
            let endpoint = try CredentialEndpoint(.container(authorization: nil), answers: [
                .credentials(server.writer, expiresIn: 312), .status(500),
            ])
            defer { endpoint.stop() }
            var environment = environment(server, home: folder)
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = endpoint.url.absoluteString + "/credentials"
            let store = store(server, environment, refreshMargin: 300, retryDelay: 1)

            try await writesAndReads(store)
            try await Task.sleep(for: .milliseconds(12_500))
            // Due for a refresh, which fails: the request goes on with the valid credentials.
            #expect(try await store.read().document != nil)
            #expect(endpoint.credentialCalls == 2)
            // Not asked again before the retry delay.
            #expect(try await store.read().document != nil)
            #expect(endpoint.credentialCalls == 2)
            try await Task.sleep(for: .milliseconds(1_200))
            endpoint.answer([.credentials(server.writer, expiresIn: 3600)])
            #expect(try await store.read().document != nil)
            #expect(endpoint.credentialCalls == 3)
        }
    }

    @Test("with no credentials anywhere, one error names every source tried and why, and no secret")
    func nothingWorks() async throws {
        let folder = try temporaryFolder("credential-chain-none")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokenFile = folder.appendingPathComponent("token")
        try write("web-identity-token-value", to: tokenFile)
        let closed = "http://127.0.0.1:\(Support.closedPort())"
        let environment = ["HOME": folder.path, "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": closed,
                           "AWS_SESSION_TOKEN": "session-token-value",
                           "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/state-writer", "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path,
                           "AWS_ENDPOINT_URL_STS": closed,
                           "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://credentials.example.com/v1/credentials",
                           "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token-value",
                           "AWS_PROFILE": "ci", "AWS_EC2_METADATA_SERVICE_ENDPOINT": closed]
        let location = try StateLocation.parse("s3://retention-state/ci", relativeTo: URL(fileURLWithPath: "/"))
        let store = try StateStores.open(location, owner: Support.sandbox, environment: environment, transport: MotoServer.client)

        let error = await #expect(throws: StateStoreError.self) { try await store.read() }
        #expect(error?.kind == .credentials)
        let message = error?.description ?? ""
        #expect(message.contains("no AWS credentials; tried, in order: 1. environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): not set"))
        #expect(message.contains("2. web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE): STS at 127.0.0.1 could not be reached"))
        #expect(message.contains("3. container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_CONTAINER_CREDENTIALS_FULL_URI): AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://credentials.example.com/v1/credentials' is refused"))
        #expect(message.contains("4. shared files' profile 'ci' (AWS_PROFILE): no profile 'ci' in \(folder.path)/.aws/credentials and \(folder.path)/.aws/config"))
        #expect(message.contains("5. EC2 instance metadata (IMDSv2): no instance metadata service answered at 127.0.0.1"))
        for secret in ["session-token-value", "web-identity-token-value", "container-token-value"] {
            #expect(!message.contains(secret))
        }
    }

    @Test("a container endpoint on a plain-http host other than loopback or the ECS and EKS addresses is refused without a request")
    func containerEndpointRefused() async throws {
        let location = try StateLocation.parse("s3://retention-state/ci", relativeTo: URL(fileURLWithPath: "/"))
        for uri in ["http://credentials.example.com/v1", "http://10.0.0.7/v1", "http://169.254.169.254/latest"] {
            let recorder = S3RequestTests.Recorder(HTTPResponse(status: 200, body: Data(#"{"AccessKeyId":"A","SecretAccessKey":"B"}"#.utf8)))
            let environment = ["AWS_CONTAINER_CREDENTIALS_FULL_URI": uri, "AWS_EC2_METADATA_DISABLED": "true", "HOME": "/nonexistent"]
            let store = try StateStores.open(location, owner: Support.sandbox, environment: environment, transport: recorder)
            let error = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(error?.message.contains("AWS_CONTAINER_CREDENTIALS_FULL_URI '\(uri)' is refused: plain http is allowed only to a loopback host") == true)
            #expect(recorder.requests.isEmpty)
        }
        // https, loopback and the EKS Pod Identity address are asked.
        for uri in ["https://credentials.example.com/v1", "http://localhost:8080/v1", "http://169.254.170.23/v1/credentials"] {
            let recorder = S3RequestTests.Recorder(HTTPResponse(status: 200, body: Data(#"{"AccessKeyId":"A","SecretAccessKey":"B"}"#.utf8)))
            let environment = ["AWS_CONTAINER_CREDENTIALS_FULL_URI": uri, "AWS_EC2_METADATA_DISABLED": "true", "HOME": "/nonexistent"]
            let store = try StateStores.open(location, owner: Support.sandbox, environment: environment, transport: recorder)
            _ = try? await store.read()
            #expect(recorder.requests.first?.url.absoluteString == uri)
            #expect(recorder.requests.dropFirst().first?.awsSigV4?.accessKeyId == "A")
        }
    }
}
