import SyntheticImages
import Emulator
import Foundation
import TestSupport
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing

/// One row of the spec's error table: a remote state, one call, and the status and code Apple gives.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var environment: Environment = .sandbox
    var expected: String
    var state: EmulatorState = .empty
    var sandboxState: EmulatorState?
    var rateLimited = false
    var serverError = false
    var noAccess = false
    var call: @Sendable (RetentionMessagingClient) async throws -> Void

    var testDescription: String { "\(name) → \(expected)" }
}

private let message1 = Fixtures.uuid(1)
private let image1 = Fixtures.uuid(0x100)
private let products: Set<String> = ["com.example.monthly", "com.example.yearly"]

private let errorCases: [ErrorCase] = [
    ErrorCase(name: "header too long", expected: "400 4000162") {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(header: Fixtures.text(67), body: "b"))
    },
    ErrorCase(name: "body too long", expected: "400 4000163") {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(header: "h", body: Fixtures.text(145)))
    },
    ErrorCase(name: "alt text too long", expected: "400 4000175") {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(
            header: "h", body: "b", image: UploadMessageImage(imageIdentifier: image1, altText: Fixtures.text(151))))
    },
    ErrorCase(name: "message image is a bullet-point image", expected: "400 4000216",
              state: .with(images: [image1: (.approved, .bulletPoint)])) {
        try await $0.uploadMessage(identifier: message1, body: Fixtures.messageWithImage(image1))
    },
    ErrorCase(name: "too many bullet points", expected: "400 4000218") {
        try await $0.uploadMessage(identifier: message1, body: Fixtures.messageWithBullets(image1, count: 6))
    },
    ErrorCase(name: "bullet point text too long", expected: "400 4000219") {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(
            header: "h", body: "b", bulletPoints: [UploadMessageBulletPoint(text: Fixtures.text(67), imageIdentifier: image1, altText: "a")]))
    },
    ErrorCase(name: "ABOVE_IMAGE without an image", expected: "400 4000224") {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(header: "h", body: "b", headerPosition: .aboveImage))
    },
    ErrorCase(name: "2000 messages already", expected: "403 4030016",
              state: .with(messages: Dictionary(uniqueKeysWithValues: (1000..<3000).map { (Fixtures.uuid($0), (MessageState.approved, Fixtures.plainMessage)) }))) {
        try await $0.uploadMessage(identifier: message1, body: Fixtures.plainMessage)
    },
    ErrorCase(name: "message identifier re-used", expected: "409 4090001",
              state: .with(messages: [message1: (.approved, Fixtures.plainMessage)])) {
        try await $0.uploadMessage(identifier: message1, body: UploadMessageRequestBody(header: "other", body: "content"))
    },
    ErrorCase(name: "delete an unknown message", expected: "404 4040015") {
        try await $0.deleteMessage(identifier: message1)
    },
    ErrorCase(name: "image is not a PNG", expected: "400 4000161") {
        try await $0.uploadImage(identifier: image1, size: .fullSize, png: Array("GIF89a".utf8))
    },
    ErrorCase(name: "image has an alpha channel", expected: "400 4000161") {
        try await $0.uploadImage(identifier: image1, size: .bulletPoint, png: PNGWriter.rgba(width: 1024, height: 1024) { _, _ in (1, 2, 3, 255) })
    },
    ErrorCase(name: "image has a tRNS chunk", expected: "400 4000161") {
        try await $0.uploadImage(identifier: image1, size: .bulletPoint, png: PNGWriter.rgbWithTransparencyChunk(width: 1024, height: 1024))
    },
    ErrorCase(name: "full-size image of the wrong width", expected: "400 4000161") {
        try await $0.uploadImage(identifier: image1, size: .fullSize, png: Fixtures.bulletPNG)
    },
    ErrorCase(name: "unknown imageSize", expected: "400 4000216") {
        try await $0.uploadImage(identifier: image1, size: ImageSize(rawValue: "HUGE"), png: Fixtures.fullSizePNG)
    },
    ErrorCase(name: "2000 images already", expected: "403 4030014",
              state: .with(images: Dictionary(uniqueKeysWithValues: (1000..<3000).map { (Fixtures.uuid($0), (ImageState.approved, ImageSize.fullSize)) }))) {
        try await $0.uploadImage(identifier: image1, size: .fullSize, png: Fixtures.fullSizePNG)
    },
    ErrorCase(name: "image identifier re-used", expected: "409 4090000", state: .with(images: [image1: (.approved, .fullSize)])) {
        try await $0.uploadImage(identifier: image1, size: .fullSize, png: Fixtures.fullSizePNG)
    },
    ErrorCase(name: "delete an image a message uses", expected: "403 4030019",
              state: .with(messages: [message1: (.approved, Fixtures.messageWithImage(image1))], images: [image1: (.approved, .fullSize)])) {
        try await $0.deleteImage(identifier: image1)
    },
    ErrorCase(name: "delete an unknown image", expected: "404 4040014") {
        try await $0.deleteImage(identifier: image1)
    },
    ErrorCase(name: "default for an unknown product", expected: "400 4000023",
              state: .with(messages: [message1: (.approved, Fixtures.plainMessage)])) {
        try await $0.configureDefaultMessage(productId: "com.example.weekly", locale: "en-US", messageIdentifier: message1)
    },
    ErrorCase(name: "default for an underscore locale", expected: "400 4000164",
              state: .with(messages: [message1: (.approved, Fixtures.plainMessage)])) {
        try await $0.configureDefaultMessage(productId: "com.example.monthly", locale: "en_US", messageIdentifier: message1)
    },
    ErrorCase(name: "get default for an invalid locale", expected: "400 4000164") {
        _ = try await $0.getDefaultMessage(productId: "com.example.monthly", locale: "english")
    },
    ErrorCase(name: "delete default for an unknown product", expected: "400 4000023") {
        try await $0.deleteDefaultMessage(productId: "com.example.weekly", locale: "en-US")
    },
    ErrorCase(name: "default with a message still in review", environment: .production, expected: "403 4030017",
              state: .with(messages: [message1: (.pending, Fixtures.plainMessage)])) {
        try await $0.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message1)
    },
    ErrorCase(name: "default with an image still in review", environment: .production, expected: "403 4030018",
              state: .with(messages: [message1: (.approved, Fixtures.messageWithImage(image1))], images: [image1: (.pending, .fullSize)])) {
        try await $0.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message1)
    },
    ErrorCase(name: "default with an unknown message", expected: "404 4040015") {
        try await $0.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message1)
    },
    ErrorCase(name: "realtime URL over plain http", expected: "400 4000215") {
        try await $0.configureRealtimeURL("http://retention.example.com/hook")
    },
    ErrorCase(name: "realtime URL longer than 256", expected: "400 4000215") {
        try await $0.configureRealtimeURL("https://retention.example.com/" + Fixtures.text(240))
    },
    ErrorCase(name: "production realtime URL before a sandbox performance test passed", environment: .production, expected: "403 4030026") {
        try await $0.configureRealtimeURL("https://retention.example.com/hook")
    },
    ErrorCase(name: "performance test without a transaction", expected: "400 4000211") {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "")
    },
    ErrorCase(name: "performance test while one runs", expected: "400 4000213",
              state: .with(performanceTests: [Fixtures.uuid(0x900): .pending], transactions: [Fixtures.subscription])) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
    },
    ErrorCase(name: "performance test with a transaction the sandbox does not know", expected: "400 4000006") {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "2000000999999999")
    },
    ErrorCase(name: "performance test with an app transaction id", expected: "400 4000048",
              state: .with(transactions: [SandboxTransaction(originalTransactionId: "2000000000000048", productId: "com.example.monthly",
                                                              appTransaction: true)])) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "2000000000000048")
    },
    ErrorCase(name: "performance test with a family-shared subscription", expected: "400 4000185",
              state: .with(transactions: [SandboxTransaction(originalTransactionId: "2000000000000185", productId: "com.example.monthly",
                                                              familyShared: true)])) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "2000000000000185")
    },
    ErrorCase(name: "performance test with a renewal's transaction id", expected: "400 4000187",
              state: .with(transactions: [SandboxTransaction(originalTransactionId: "2000000000000187", productId: "com.example.monthly",
                                                              original: false)])) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "2000000000000187")
    },
    ErrorCase(name: "performance test without a sandbox realtime URL", expected: "400 4000211",
              state: .with(transactions: [Fixtures.subscription])) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
    },
    ErrorCase(name: "performance test for an account without API access", expected: "404 no-access", noAccess: true) {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
    },
    ErrorCase(name: "realtime URL for an account without API access", expected: "404 no-access", noAccess: true) {
        try await $0.configureRealtimeURL("https://retention.example.com/hook")
    },
    ErrorCase(name: "deleting the realtime URL for an account without API access", expected: "404 no-access", noAccess: true) {
        try await $0.deleteRealtimeURL()
    },
    ErrorCase(name: "performance test result for a malformed id", expected: "400 4000212") {
        _ = try await $0.getPerformanceTestResult(requestId: "not-a-request-id")
    },
    ErrorCase(name: "performance test result for an unknown id", expected: "404 4040018") {
        _ = try await $0.getPerformanceTestResult(requestId: Fixtures.uuid(0x901))
    },
    ErrorCase(name: "performance test in production is refused before sending", environment: .production,
              expected: "invalid request: Apple runs the performance test in sandbox only (it tests the sandbox realtime URL); use a sandbox client") {
        _ = try await $0.initiatePerformanceTest(originalTransactionId: "2000000123456789")
    },
    ErrorCase(name: "over the hourly budget", expected: "429 4290000", rateLimited: true) {
        _ = try await $0.getMessageList()
        _ = try await $0.getMessageList()
    },
    ErrorCase(name: "server error", expected: "500 5000000", serverError: true) {
        _ = try await $0.getMessageList()
    },
]

@Suite("Apple's error table, produced by the emulator and decoded by the client")
struct ErrorTableTests {
    @Test("each error comes back with Apple's status and code", arguments: Face.allCases, errorCases)
    func errorCase(face: Face, errorCase: ErrorCase) async throws {
        let app = TestApp()
        let emulator = app.emulator(rateLimit: errorCase.rateLimited ? .custom(perHourOther: 1, perHourDefaults: 1) : .off,
                                    faults: FaultInjection(serverErrorRate: errorCase.serverError ? 1 : 0), productIds: products,
                                    apiAccess: !errorCase.noAccess)
        emulator.restore(errorCase.state, in: errorCase.environment)
        let harness = try Harness(face, app: app, emulator: emulator)
        let client = harness.client(errorCase.environment, retry: .none)

        let error = await apiError { try await errorCase.call(client) }
        #expect(error?.statusAndCode == errorCase.expected)
        if case .api(_, .some, let message)? = error {
            #expect(message?.isEmpty == false)
        }
        #expect(client.requestCounts.total == emulator.requestCount(in: errorCase.environment))
    }

    @Test("an error body is exactly Apple's JSON with a JSON content type", arguments: Face.allCases)
    func errorBody(face: Face) async throws {
        let harness = try Harness(face)
        let recorder = RecordingTransport(harness.transport)
        let client = harness.client(transport: recorder)
        let error = await apiError { try await client.deleteMessage(identifier: message1) }
        #expect(error == .api(status: 404, errorCode: 4040015, errorMessage: "Message not found."))
        let response = try #require(recorder.responses.last)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"errorCode":4040015,"errorMessage":"Message not found."}"#)
        #expect(response.header("Content-Type") == "application/json")
    }

    @Test("an unknown error code and an unknown review state are kept, not a crash")
    func forwardCompatible() async throws {
        let transport = StaticTransport(responses: [
            HTTPResponse(status: 200, body: Data(#"{"messageIdentifiers":[{"messageIdentifier":"x","messageState":"IN_APPEAL"}]}"#.utf8)),
            HTTPResponse(status: 418, body: Data(#"{"errorCode":4189999,"errorMessage":"New thing."}"#.utf8)),
            HTTPResponse(status: 400, body: Data("<html>oops</html>".utf8)),
        ])
        let client = TestApp().client(transport: transport, retry: .none)
        let list = try await client.getMessageList()
        #expect(list.messageIdentifiers.first?.messageState.rawValue == "IN_APPEAL")
        #expect(await apiError { _ = try await client.getImageList() } == .api(status: 418, errorCode: 4189999, errorMessage: "New thing."))
        #expect(await apiError { _ = try await client.getImageList() } == .api(status: 400, errorCode: nil, errorMessage: nil))
    }
}

/// Answers with the given responses in order.
final class StaticTransport: HTTPTransport {
    private let responses: Locked<[HTTPResponse]>
    init(responses: [HTTPResponse]) { self.responses = Locked(responses) }
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let next = responses.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { throw HTTPError(.other, "no more responses") }
        return next
    }
}
