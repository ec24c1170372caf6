import Foundation
import HTTPCore
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

/// Against moto's S3-compatible server with signature checking and IAM policies on: every request
/// here is really signed by libcurl and checked by the server.
@Suite("S3 state store against moto", .serialized)
struct S3StateStoreTests {
    typealias Support = StateStoreTestSupport

    func withServer(_ body: (MotoServer) async throws -> Void) async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        try await body(server)
    }

    func store(_ server: MotoServer, key: String = "retention-sync", owner: StateOwner = Support.sandbox,
               identity: MotoServer.Identity? = nil) throws -> any StateDocumentStore {
        let location = try StateLocation.parse("s3://\(server.bucket)/\(key)", relativeTo: URL(fileURLWithPath: "/"))
        return try StateStores.open(location, owner: owner, environment: server.environment(identity ?? server.writer),
                                    transport: MotoServer.client)
    }

    @Test("an apply writes the state and a plan on another runner reads the same document back")
    func roundTrip() async throws {
        try await withServer { server in
            let writer = try store(server)
            #expect(writer.location == .s3(bucket: server.bucket, key: "retention-sync/sandbox.json"))
            let document = try Support.document(for: Support.sandbox)
            let first = try await writer.write(document, condition: .createOnly)

            let reader = try store(server, identity: server.reader)
            let read = try await reader.read()
            #expect(read.document == (try document.sealed()))
            #expect(read.version == first)
            #expect(read.migratedFrom == nil)

            var next = try #require(read.document)
            next.recordDefault(productId: "com.example.app.monthly", locale: "de-DE", messageIdentifier: nil, at: Support.uploaded)
            let second = try await writer.write(next, condition: read.writeCondition)
            #expect(second != first)
            #expect(try await reader.read().document?.defaults.count == 2)
        }
    }

    @Test("of two applies racing on one environment exactly one writes; the other gets a conflict")
    func racingWriters() async throws {
        try await withServer { server in
            let first = try store(server)
            let second = try store(server)
            // Both start from an empty store.
            #expect(try await first.read().isEmpty)
            #expect(try await second.read().isEmpty)
            _ = try await first.write(try Support.document(for: Support.sandbox, message: "first"), condition: .createOnly)
            let creation = await #expect(throws: StateStoreError.self) {
                try await second.write(try Support.document(for: Support.sandbox, message: "second"), condition: .createOnly)
            }
            #expect(creation?.kind == .conflict)

            // Both read the same version; the later writer loses and nothing of the winner is lost.
            let base = try await first.read()
            let seenBySecond = try await second.read()
            #expect(base.version == seenBySecond.version)
            _ = try await first.write(try Support.document(for: Support.sandbox, message: "winner"), condition: base.writeCondition)
            let update = await #expect(throws: StateStoreError.self) {
                try await second.write(try Support.document(for: Support.sandbox, message: "loser"), condition: seenBySecond.writeCondition)
            }
            #expect(update?.kind == .conflict)
            #expect(update?.description.contains("s3://\(server.bucket)/retention-sync/sandbox.json") == true)
            #expect(try await second.read().document?.snapshot?.rules.first?.response.message == "winner")
        }
    }

    @Test("a plan whose store cannot be reached stops with an error, never an empty state")
    func unreachableStore() async throws {
        let location = try StateLocation.parse("s3://retention-state/retention-sync", relativeTo: URL(fileURLWithPath: "/"))
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
                           "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(Support.closedPort())"]
        let store = try StateStores.open(location, owner: Support.sandbox, environment: environment, transport: MotoServer.client)
        let error = await #expect(throws: StateStoreError.self) { try await store.read() }
        #expect(error?.kind == .unreachable)
        #expect(error?.description.hasPrefix("state store s3://retention-state/retention-sync/sandbox.json: cannot reach 127.0.0.1") == true)
    }

    @Test("wrong or unknown credentials are named as a credentials problem")
    func wrongCredentials() async throws {
        try await withServer { server in
            let wrongSecret = MotoServer.Identity(accessKeyId: server.writer.accessKeyId, secretAccessKey: "not-the-secret")
            let error = await #expect(throws: StateStoreError.self) { try await store(server, identity: wrongSecret).read() }
            #expect(error?.kind == .credentials)
            #expect(error?.message.contains("SignatureDoesNotMatch") == true)
            #expect(error?.description.contains("not-the-secret") == false)

            let unknown = MotoServer.Identity(accessKeyId: "AKIAUNKNOWN000000000", secretAccessKey: "secret")
            let refused = await #expect(throws: StateStoreError.self) { try await store(server, identity: unknown).read() }
            #expect(refused?.kind == .credentials)
            #expect(refused?.message.contains("InvalidAccessKeyId") == true)
        }
    }

    @Test("missing AWS credentials stop at the first request, before anything reaches the store")
    func missingCredentials() async throws {
        let location = try StateLocation.parse("s3://retention-state", relativeTo: URL(fileURLWithPath: "/"))
        let recorder = S3RequestTests.Recorder(HTTPResponse(status: 200))
        let store = try StateStores.open(location, owner: Support.sandbox, environment: ["AWS_EC2_METADATA_DISABLED": "true"], transport: recorder)
        let error = await #expect(throws: StateStoreError.self) { try await store.read() }
        #expect(error?.kind == .credentials)
        #expect(error?.message.contains("AWS_ACCESS_KEY_ID") == true)
        #expect(recorder.requests.isEmpty)
    }

    @Test("a plan identity may read the state but not write it")
    func readOnlyIdentity() async throws {
        try await withServer { server in
            _ = try await store(server).write(try Support.document(for: Support.sandbox), condition: .createOnly)
            let planner = try store(server, identity: server.reader)
            let read = try await planner.read()
            #expect(read.document != nil)
            let error = await #expect(throws: StateStoreError.self) {
                try await planner.write(try #require(read.document), condition: read.writeCondition)
            }
            #expect(error?.kind == .accessDenied)
        }
    }

    @Test("a store that is reachable but holds nothing yet reads as empty; a missing bucket is an error")
    func missingObjectAndMissingBucket() async throws {
        try await withServer { server in
            let read = try await store(server).read()
            #expect(read.isEmpty)
            #expect(read.writeCondition == .createOnly)

            let location = try StateLocation.parse("s3://no-such-bucket/retention-sync", relativeTo: URL(fileURLWithPath: "/"))
            let missing = try StateStores.open(location, owner: Support.sandbox, environment: server.environment(server.writer),
                                               transport: MotoServer.client)
            let error = await #expect(throws: StateStoreError.self) { try await missing.read() }
            #expect(error?.kind == .noSuchBucket || error?.kind == .accessDenied)
        }
    }

    @Test("a corrupt object is an error that names the store, and is not overwritten as if empty")
    func corruptObject() async throws {
        try await withServer { server in
            let planted = try await server.putObject(key: "retention-sync/sandbox.json", body: Data("{\"format_version\": \"1.0\", ".utf8),
                                                     as: server.writer)
            #expect(planted.status == 200)
            let store = try store(server)
            let error = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(error?.kind == .corrupt)
            #expect(error?.store == "s3://\(server.bucket)/retention-sync/sandbox.json")
            let overwrite = await #expect(throws: StateStoreError.self) {
                try await store.write(try Support.document(for: Support.sandbox), condition: .createOnly)
            }
            #expect(overwrite?.kind == .conflict)
        }
    }

    @Test("a document edited after it was written fails its digest check")
    func digestMismatch() async throws {
        try await withServer { server in
            let text = String(decoding: try Support.document(for: Support.sandbox).encoded(), as: UTF8.self)
            let edited = text.replacingOccurrences(of: "https://example.com/retention", with: "https://attacker.example/retention")
            #expect(edited != text)
            _ = try await server.putObject(key: "retention-sync/sandbox.json", body: Data(edited.utf8), as: server.writer)
            let error = await #expect(throws: StateStoreError.self) { try await store(server).read() }
            #expect(error?.kind == .digestMismatch)
        }
    }

    @Test("a document of another environment at the same key is refused on read and never overwritten")
    func anotherEnvironmentsDocument() async throws {
        try await withServer { server in
            let production = try store(server, key: "shared.json", owner: Support.production)
            _ = try await production.write(try Support.document(for: Support.production), condition: .createOnly)

            let sandbox = try store(server, key: "shared.json", owner: Support.sandbox)
            let error = await #expect(throws: StateStoreError.self) { try await sandbox.read() }
            #expect(error?.kind == .wrongOwner)
            #expect(error?.message.contains("com.example.app production, not com.example.app sandbox") == true)

            let otherApp = StateOwner(bundleId: "com.example.other", appAppleId: nil, environment: .production)
            let refused = await #expect(throws: StateStoreError.self) { try await store(server, key: "shared.json", owner: otherApp).read() }
            #expect(refused?.kind == .wrongOwner)
            #expect(try await production.read().document?.environment == .production)
        }
    }

    @Test("a snapshot copied to the bucket before the state store existed is read and migrated")
    func migrationFromSnapshotObject() async throws {
        try await withServer { server in
            let snapshot = try Support.snapshot(for: Support.sandbox)
            _ = try await server.putObject(key: "retention-sync/sandbox.json", body: try snapshot.encoded(), as: server.writer)
            let store = try store(server)
            let read = try await store.read()
            #expect(read.document?.snapshot == snapshot)
            #expect(read.document?.content == [])
            #expect(read.migratedFrom == "s3://\(server.bucket)/retention-sync/sandbox.json")
            _ = try await store.write(try #require(read.document), condition: read.writeCondition)
            let migrated = try await store.read()
            #expect(migrated.migratedFrom == nil)
            #expect(migrated.document?.snapshot == snapshot)
        }
    }

    @Test("an empty bucket with a legacy snapshot file beside the manifests starts from that snapshot")
    func migrationFromSnapshotFile() async throws {
        try await withServer { server in
            let directory = try Support.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("sandbox-snapshot.json")
            let snapshot = try Support.snapshot(for: Support.sandbox)
            try snapshot.encoded().write(to: file)

            let store = try store(server)
            let read = try await StateStores.read(store, legacySnapshotPath: file.path)
            #expect(read.document?.snapshot == snapshot)
            #expect(read.migratedFrom == file.path)
            #expect(read.writeCondition == .createOnly)
            _ = try await store.write(try #require(read.document), condition: read.writeCondition)
            // Once the store holds a document, the legacy file is no longer consulted.
            let later = try await StateStores.read(store, legacySnapshotPath: file.path)
            #expect(later.migratedFrom == nil)
        }
    }

    @Test("a server polling the store gets 'unchanged' until an apply publishes, then the new document")
    func conditionalPolling() async throws {
        try await withServer { server in
            let apply = try store(server)
            let version = try await apply.write(try Support.document(for: Support.sandbox, message: "first"), condition: .createOnly)

            let serve = try store(server, identity: server.reader)
            #expect(try await serve.poll(since: version) == .unchanged)
            #expect(try await serve.poll(since: version) == .unchanged)

            let newer = try await apply.write(try Support.document(for: Support.sandbox, message: "second"), condition: .ifMatch(version))
            guard case .changed(let read) = try await serve.poll(since: version) else {
                Issue.record("the poll did not see the new publish")
                return
            }
            #expect(read.version == newer)
            #expect(read.document?.snapshot?.rules.first?.response.message == "second")
            #expect(try await serve.poll(since: newer) == .unchanged)
        }
    }
}

/// The exact requests the S3 store sends, captured without a server.
@Suite("S3 requests")
struct S3RequestTests {
    final class Recorder: HTTPTransport {
        private let recorded = Locked<[HTTPRequest]>()
        let response: HTTPResponse

        init(_ response: HTTPResponse) { self.response = response }

        var requests: [HTTPRequest] { recorded.value }

        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
            recorded.append(request)
            return response
        }
    }

    @Test("temporary credentials send their session token, and no credential shows in a description")
    func sessionToken() async throws {
        let recorder = Recorder(HTTPResponse(status: 200, headers: [("ETag", "\"abc\"")]))
        let environment = ["AWS_ACCESS_KEY_ID": "ASIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "very-secret",
                           "AWS_SESSION_TOKEN": "session-token-value", "AWS_DEFAULT_REGION": "eu-west-1"]
        let location = try StateLocation.parse("s3://retention-state/ci", relativeTo: URL(fileURLWithPath: "/"))
        let store = try StateStores.open(location, owner: StateStoreTestSupport.sandbox, environment: environment, transport: recorder)
        let version = try await store.write(try StateStoreTestSupport.document(for: StateStoreTestSupport.sandbox), condition: .createOnly)
        #expect(version == StateVersion("\"abc\""))

        let request = try #require(recorder.requests.first)
        #expect(request.method == "PUT")
        #expect(request.url.absoluteString == "https://retention-state.s3.eu-west-1.amazonaws.com/ci/sandbox.json")
        #expect(request.header("x-amz-security-token") == "session-token-value")
        #expect(request.header("If-None-Match") == "*")
        #expect(request.header("x-amz-content-sha256") == StateStoreTestSupport.sha256Hex(request.body))
        #expect(request.awsSigV4 == AWSSigV4Signing(region: "eu-west-1", service: "s3", accessKeyId: "ASIAEXAMPLE", secretAccessKey: "very-secret"))
        let printed = "\(request) \(String(reflecting: request)) \(store)"
        #expect(!printed.contains("very-secret"))
        #expect(!printed.contains("session-token-value"))
    }

    @Test("a custom endpoint is addressed path-style, AWS virtual-hosted unless the bucket has dots")
    func addressing() {
        let custom = S3Configuration(accessKeyId: "a", secretAccessKey: "b", region: "auto",
                                     endpoint: URL(string: "https://account.r2.cloudflarestorage.com/"))
        #expect(custom.url(bucket: "state", key: "prod.json").absoluteString == "https://account.r2.cloudflarestorage.com/state/prod.json")
        let aws = S3Configuration(accessKeyId: "a", secretAccessKey: "b", region: "us-east-2")
        #expect(aws.url(bucket: "state", key: "p/sandbox.json").absoluteString == "https://state.s3.us-east-2.amazonaws.com/p/sandbox.json")
        #expect(aws.url(bucket: "my.state", key: "x.json").absoluteString == "https://s3.us-east-2.amazonaws.com/my.state/x.json")
    }

    @Test("a plain http endpoint is refused unless it is on loopback")
    func plainHTTPEndpoint() throws {
        let environment = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "http://minio.internal:9000"]
        let error = #expect(throws: StateStoreError.self) { try S3Configuration.fromEnvironment(environment, store: "s3://x/y") }
        #expect(error?.kind == .configuration)
        let loopback = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
                        "AWS_ENDPOINT_URL_S3": "http://localhost:9001"]
        #expect(try S3Configuration.fromEnvironment(loopback, store: "s3://x/y").endpoint?.absoluteString == "http://localhost:9001")
    }

    @Test("a 5xx from the store is a server error, never an empty state")
    func serverError() async throws {
        let recorder = Recorder(HTTPResponse(status: 503, body: Data("<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>".utf8)))
        let store = S3StateStore(bucket: "retention-state", key: "sandbox.json", owner: StateStoreTestSupport.sandbox,
                                 configuration: S3Configuration(accessKeyId: "a", secretAccessKey: "b", region: "us-east-1"),
                                 transport: recorder)
        let error = await #expect(throws: StateStoreError.self) { try await store.read() }
        #expect(error?.kind == .serverError)
        #expect(error?.description == "state store s3://retention-state/sandbox.json: the store failed (HTTP 503 SlowDown: Reduce your request rate.); nothing was taken as empty, try again later")
    }
}
