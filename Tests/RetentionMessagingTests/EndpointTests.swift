import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

@Suite("Every endpoint against the emulator")
struct EndpointTests {
    @Test("every endpoint succeeds, and the client's request count equals what the emulator saw", arguments: Face.allCases)
    func everyEndpoint(face: Face) async throws {
        let app = TestApp()
        // The performance test's realtime requests go to a stub that answers `{}`: nothing leaves the process.
        let emulator = app.emulator(performanceTest: PerformanceTestSettings(maxConcurrentRequests: 2, totalRequests: 4, totalDuration: 0,
                                                                                             responseTimeThreshold: 15_000),
                                    realtimeSigner: ClosureRealtimeRequestSigner { _ in "header.payload.signature" },
                                    realtimeTransport: StaticTransport(responses: Array(repeating: HTTPResponse(status: 200, body: Data("{}".utf8)), count: 4)))
        emulator.registerTestTransaction(Fixtures.subscription)
        let harness = try Harness(face, app: app, emulator: emulator)
        let sandbox = harness.client(.sandbox)
        let image = Fixtures.uuid(0x100)
        let bullet = Fixtures.uuid(0x101)
        let message = Fixtures.uuid(1)

        try await sandbox.uploadImage(identifier: image, size: .fullSize, png: Fixtures.fullSizePNG)
        try await sandbox.uploadImage(identifier: bullet, size: .bulletPoint, png: Fixtures.bulletPNG)
        let images = try await sandbox.getImageList()
        #expect(images.imageIdentifiers == [
            GetImageListResponseItem(imageIdentifier: image, imageState: .approved, imageSize: .fullSize),
            GetImageListResponseItem(imageIdentifier: bullet, imageState: .approved, imageSize: .bulletPoint),
        ])

        var body = Fixtures.messageWithImage(image)
        body.bulletPoints = [UploadMessageBulletPoint(text: "Offline playlists", imageIdentifier: bullet, altText: "a download arrow")]
        try await sandbox.uploadMessage(identifier: message, body: body)
        #expect(try await sandbox.getMessageList().messageIdentifiers == [GetMessageListResponseItem(messageIdentifier: message, messageState: .approved)])
        #expect(harness.emulator.state(of: .sandbox).messages[message]?.body == body)

        try await sandbox.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message)
        #expect(try await sandbox.getDefaultMessage(productId: "com.example.monthly", locale: "en-US")?.messageIdentifier == message)
        try await sandbox.deleteDefaultMessage(productId: "com.example.monthly", locale: "en-US")
        #expect(try await sandbox.getDefaultMessage(productId: "com.example.monthly", locale: "en-US") == nil)
        try await sandbox.deleteDefaultMessage(productId: "com.example.monthly", locale: "en-US")

        try await sandbox.configureRealtimeURL("https://retention.example.com/hook")
        #expect(try await sandbox.getRealtimeURL() == "https://retention.example.com/hook")

        let started = try await sandbox.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
        await harness.emulator.waitForPerformanceTest(started.requestId)
        let result = try await sandbox.getPerformanceTestResult(requestId: started.requestId)
        #expect(result.result == .pass)
        #expect(result.target == "https://retention.example.com/hook")

        try await sandbox.deleteRealtimeURL()
        #expect(try await sandbox.getRealtimeURL() == nil)

        try await sandbox.deleteMessage(identifier: message)
        try await sandbox.deleteImage(identifier: image)
        try await sandbox.deleteImage(identifier: bullet)
        let remaining = harness.emulator.state(of: .sandbox)
        #expect(remaining.messages.isEmpty && remaining.images.isEmpty && remaining.defaults.isEmpty && remaining.realtimeURL == nil)
        #expect(remaining.performanceTests == [started.requestId: .pass])

        // A passing sandbox test unlocks the production realtime URL.
        let production = harness.client(.production)
        try await production.configureRealtimeURL("https://retention.example.com/hook")
        #expect(try await production.getRealtimeURL() == "https://retention.example.com/hook")

        #expect(sandbox.requestCounts == RequestCounts(configureDefault: 1, other: 18, retries: 0))
        #expect(sandbox.requestCounts.total == harness.emulator.requestCount(in: .sandbox))
        #expect(production.requestCounts.total == harness.emulator.requestCount(in: .production))
    }

    @Test("production content stays PENDING until an admin call approves it, and a default on it is refused until then",
          arguments: Face.allCases)
    func productionReview(face: Face) async throws {
        let harness = try Harness(face)
        let production = harness.client(.production)
        let message = Fixtures.uuid(2)
        let image = Fixtures.uuid(0x200)
        try await production.uploadImage(identifier: image, size: .fullSize, png: Fixtures.fullSizePNG)
        try await production.uploadMessage(identifier: message, body: Fixtures.messageWithImage(image))
        #expect(try await production.getMessageList().messageIdentifiers.map(\.messageState) == [.pending])
        #expect(try await production.getImageList().imageIdentifiers.map(\.imageState) == [.pending])

        let refused = await apiError {
            try await production.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message)
        }
        #expect(refused?.statusAndCode == "403 4030017")

        #expect(try await harness.admin("POST", "/emulator/messages/\(message)/approve", in: .production).status == 200)
        let imageRefused = await apiError {
            try await production.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message)
        }
        #expect(imageRefused?.statusAndCode == "403 4030018")

        #expect(try await harness.admin("POST", "/emulator/images/\(image)/approve", in: .production).status == 200)
        try await production.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message)
        #expect(try await production.getMessageList().messageIdentifiers.map(\.messageState) == [.approved])
        // Sandbox is a separate store.
        #expect(harness.emulator.state(of: .sandbox) == .empty)
    }

    @Test("a rejected message is listed as REJECTED", arguments: Face.allCases)
    func rejection(face: Face) async throws {
        let harness = try Harness(face)
        let production = harness.client(.production)
        try await production.uploadMessage(identifier: Fixtures.uuid(3), body: Fixtures.plainMessage)
        #expect(try await harness.admin("POST", "/emulator/messages/\(Fixtures.uuid(3))/reject", in: .production).status == 200)
        #expect(try await production.getMessageList().messageIdentifiers.map(\.messageState) == [.rejected])
        #expect(try await harness.admin("POST", "/emulator/messages/\(Fixtures.uuid(4))/approve", in: .production).status == 404)
    }

    @Test("approve-all approves everything pending, and the state route shows it", arguments: Face.allCases)
    func approveAll(face: Face) async throws {
        let harness = try Harness(face)
        let production = harness.client(.production)
        try await production.uploadMessage(identifier: Fixtures.uuid(5), body: Fixtures.plainMessage)
        try await production.uploadImage(identifier: Fixtures.uuid(0x500), size: .bulletPoint, png: Fixtures.bulletPNG)
        let answer = try await harness.admin("POST", "/emulator/approve-all", in: .production)
        #expect(answer.status == 200)
        // It answers what it approved, not the emulator's whole state.
        let approved = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: [String]])
        #expect(approved == ["approvedMessages": [Fixtures.uuid(5)], "approvedImages": [Fixtures.uuid(0x500)]])
        let state = try await harness.admin("GET", "/emulator/state", in: .production)
        let decoded = try JSONDecoder().decode(EmulatorState.self, from: state.body)
        #expect(decoded.messages[Fixtures.uuid(5)]?.state == .approved)
        #expect(decoded.images[Fixtures.uuid(0x500)]?.state == .approved)
        #expect(decoded == harness.emulator.state(of: .production))
    }

    @Test("re-uploading an identifier gives 409, whatever the content", arguments: Face.allCases)
    func reupload(face: Face) async throws {
        let harness = try Harness(face)
        let client = harness.client()
        try await client.uploadMessage(identifier: Fixtures.uuid(6), body: Fixtures.plainMessage)
        let again = await apiError { try await client.uploadMessage(identifier: Fixtures.uuid(6), body: Fixtures.plainMessage) }
        #expect(again == .api(status: 409, errorCode: 4090001, errorMessage: "A message with this identifier already exists."))
        try await client.uploadImage(identifier: Fixtures.uuid(0x600), size: .fullSize, png: Fixtures.fullSizePNG)
        let imageAgain = await apiError { try await client.uploadImage(identifier: Fixtures.uuid(0x600), size: .fullSize, png: Fixtures.fullSizePNG) }
        #expect(imageAgain?.statusAndCode == "409 4090000")
    }

    @Test("the endpoint override accepts plain http only on loopback")
    func endpointOverride() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        for (endpoint, allowed) in [
            ("http://127.0.0.1:9/inApps/v1/messaging", true), ("http://localhost:9/inApps/v1/messaging", true),
            ("http://[::1]:9/inApps/v1/messaging", true), ("http://127.8.9.10/inApps/v1/messaging", true),
            ("http://api.example.com/inApps/v1/messaging", false), ("http://10.0.0.1/inApps/v1/messaging", false),
            ("http://127.0.0.1.example.com/inApps/v1/messaging", false), ("https://api.example.com/inApps/v1/messaging", true),
            ("ftp://127.0.0.1/inApps/v1/messaging", false),
        ] {
            let client = app.client(transport: emulator.transport(), endpoint: URL(string: endpoint)!)
            let error = await apiError { _ = try await client.getMessageList() }
            if allowed {
                #expect(error == nil, "\(endpoint)")
            } else {
                guard case .invalidRequest? = error else {
                    Issue.record("\(endpoint) should be refused, got \(String(describing: error))")
                    continue
                }
                #expect(client.requestCounts.total == 0)
            }
        }
        #expect(RetentionMessagingClient.defaultEndpoint(for: .production).absoluteString == "https://api.storekit.apple.com/inApps/v1/messaging")
        #expect(RetentionMessagingClient.defaultEndpoint(for: .sandbox).absoluteString == "https://api.storekit-sandbox.apple.com/inApps/v1/messaging")
    }

    @Test("the in-process transport keeps Apple's two hosts apart")
    func hosts() async throws {
        let app = TestApp()
        let emulator = app.emulator(review: .auto)
        try await app.client(.production, transport: emulator.transport()).uploadMessage(identifier: Fixtures.uuid(7), body: Fixtures.plainMessage)
        #expect(emulator.state(of: .production).messages[Fixtures.uuid(7)]?.state == .approved)
        #expect(emulator.state(of: .sandbox).messages.isEmpty)
        #expect(try await app.client(.sandbox, transport: emulator.transport()).getMessageList().messageIdentifiers.isEmpty)
    }

    @Test("product ids and locales with unusual characters travel percent-encoded")
    func percentEncoding() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        let recorder = RecordingTransport(emulator.transport())
        let client = app.client(transport: recorder)
        let error = await apiError { _ = try await client.getDefaultMessage(productId: "com.example/../x", locale: "en US") }
        #expect(error?.statusAndCode == "400 4000023")
        #expect(recorder.requests.first?.url.absoluteString.hasSuffix("/default/com.example%2F..%2Fx/en%20US") == true)
    }
}
