import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

@Suite("What the client makes of Apple's answers")
struct ClientErrorTests {
    static let quickRetries = RetryPolicy(maxAttempts: 4, baseDelay: 0.001, maxDelay: 0.002)

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: Data(text.utf8))
    }

    @Test("5000001 is retried like 5000000")
    func retryable5000001() async throws {
        let transport = StaticTransport(responses: [
            Self.json(500, #"{"errorCode":5000001,"errorMessage":"An unknown error occurred. Please try again."}"#),
            Self.json(200, #"{"messageIdentifiers":[]}"#),
        ])
        let client = TestApp().client(transport: transport, retry: Self.quickRetries)
        #expect(try await client.getMessageList().messageIdentifiers.isEmpty)
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 2, retries: 1))
    }

    @Test("an account without API access gets a setup error that says how to request access, never 'not found'")
    func noAccess() async throws {
        let client = TestApp().client(transport: StaticTransport(responses: [HTTPResponse(status: 404)]), retry: .none)
        let error = await apiError { try await client.configureRealtimeURL("https://retention.example.com/hook") }
        #expect(error == .noAPIAccess(endpoint: "PUT /realtime/url"))
        #expect(error?.isNoAPIAccess == true)
        let text = error?.description ?? ""
        #expect(text.contains("no access to the Retention Messaging API"))
        #expect(text.contains("request access"))
        #expect(!text.lowercased().contains("not found"))
    }

    @Test("a 404 with an error code on the same endpoints keeps its meaning")
    func notFoundWithCode() async throws {
        let client = TestApp().client(transport: StaticTransport(responses: [
            Self.json(404, #"{"errorCode":4040021,"errorMessage":"Realtime URL not found."}"#),
            Self.json(404, #"{"errorCode":4040018,"errorMessage":"Performance test not found."}"#),
        ]), retry: .none)
        #expect(try await client.getRealtimeURL() == nil)
        let error = await apiError { _ = try await client.getPerformanceTestResult(requestId: Fixtures.uuid(9)) }
        #expect(error?.statusAndCode == "404 4040018")
    }

    @Test("deleting a message or an image that is already gone is recognisable as done", arguments: Face.allCases)
    func alreadyGone(face: Face) async throws {
        let harness = try Harness(face)
        let client = harness.client(retry: .none)
        let message = await apiError { try await client.deleteMessage(identifier: Fixtures.uuid(1)) }
        let image = await apiError { try await client.deleteImage(identifier: Fixtures.uuid(2)) }
        #expect(message?.isAlreadyGone == true)
        #expect(image?.isAlreadyGone == true)
        let other = await apiError { _ = try await client.getDefaultMessage(productId: "com.example.monthly", locale: "english") }
        #expect(other?.isAlreadyGone == false)
    }

    @Test("image upload's 403 is 'maximum reached' with either 4030014 or 4030016", arguments: [4030014, 4030016])
    func maximumReached(code: Int) async throws {
        let client = TestApp().client(transport: StaticTransport(responses: [
            Self.json(403, #"{"errorCode":\#(code),"errorMessage":"The maximum number of images has been reached."}"#),
        ]), retry: .none)
        let error = await apiError { try await client.uploadImage(identifier: Fixtures.uuid(3), size: .fullSize, png: Fixtures.fullSizePNG) }
        #expect(error?.isMaximumReached == true)
    }

    @Test("Apple's message is printed without its own final period, so a caller's sentence never ends in '..'", arguments: Face.allCases)
    func noDoublePeriod(face: Face) async throws {
        let harness = try Harness(face)
        let client = harness.client(retry: .none)
        let error = await apiError { try await client.uploadImage(identifier: Fixtures.uuid(3), size: .fullSize, png: [0, 1, 2]) }
        #expect(error?.statusAndCode == "400 4000161")
        let sentence = "apply stopped: \(error!)."
        #expect(!sentence.contains(".."))
        #expect(sentence.hasSuffix("not a PNG."))
    }

    @Test("the body limit is above the largest valid image, and a body beyond it is refused saying why")
    func largeImage() async throws {
        // The largest valid PNG: 3840 × 2160, 16-bit RGB (6 bytes a pixel, one filter byte a row),
        // stored without compression (5 bytes of zlib framing per 65,535), plus the chunks around it.
        let raw = (3840 * 6 + 1) * 2160
        let largestValidImage = raw + (raw / 65_535 + 1) * 5 + 6 + 8 + 25 + 12 * 2
        #expect(largestValidImage < EmulatorConfiguration.maxBodySize)

        let app = TestApp()
        let emulator = app.emulator()
        let client = app.client(transport: emulator.transport(), retry: .none)
        let huge = [UInt8](repeating: 0, count: EmulatorConfiguration.maxBodySize + 1)
        let error = await apiError { try await client.uploadImage(identifier: Fixtures.uuid(5), size: .fullSize, png: huge) }
        #expect(error?.status == 413)
        #expect(error?.description.contains("Apple documents no limit") == true)
        #expect(emulator.state(of: .sandbox).images.isEmpty)
    }
}
