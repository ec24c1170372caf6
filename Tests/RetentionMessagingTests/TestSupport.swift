import SyntheticImages
import Basics
import Crypto
import Emulator
import Foundation
import TestSupport
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels

/// One app's key and ids, and the emulators and clients made from them.
struct TestApp {
    static let bundleId = "com.example.retention"
    static let keyId = "ABC123DEFG"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    let key = ES256PrivateKey.generate()

    var credentials: Credentials {
        Credentials(keyId: Self.keyId, issuerId: Self.issuerId, bundleId: Self.bundleId, privateKey: key)
    }

    func emulator(review: ReviewMode = .manual, rateLimit: RateLimitMode = .off, clock: any RetentionClock = SystemClock(),
                  faults: FaultInjection = .none, productIds: Set<String>? = nil, stateFile: URL? = nil,
                  clockSkew: Double = 60, performanceTest: PerformanceTestSettings = .default,
                  realtimeSigner: (any RealtimeRequestSigner)? = nil, realtimeTransport: (any HTTPTransport)? = nil,
                  apiAccess: Bool = true) -> Emulator {
        Emulator(configuration: EmulatorConfiguration(
            publicKey: key.publicKey, keyId: Self.keyId, issuerId: Self.issuerId, bundleId: Self.bundleId,
            productionReview: review, rateLimit: rateLimit, clock: clock, faults: faults, productIds: productIds,
            stateFile: stateFile, clockSkew: clockSkew, performanceTest: performanceTest, realtimeSigner: realtimeSigner,
            realtimeTransport: realtimeTransport, apiAccess: apiAccess))
    }

    func client(_ environment: Environment = .sandbox, transport: any HTTPTransport, endpoint: URL? = nil,
                pacing: Pacing = .unlimited, clock: any RetentionClock = SystemClock(),
                retry: RetryPolicy = .default) -> RetentionMessagingClient {
        RetentionMessagingClient(environment: environment, credentials: credentials, transport: transport, endpoint: endpoint,
                                 pacing: pacing, clock: clock, retry: retry)
    }
}

enum Fixtures {
    /// A deterministic UUID per number, so failures name the same identifiers every run.
    static func uuid(_ number: Int) -> String {
        let digits = String(number, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    static let fullSizePNG = PNGWriter.rgb(width: 3840, height: 160) { x, _ in (UInt8(x % 200), 40, 90) }
    static let bulletPNG = PNGWriter.rgb(width: 1024, height: 1024) { _, y in (10, UInt8(y % 250), 10) }

    /// A sandbox subscription a performance test may use.
    static let subscription = SandboxTransaction(originalTransactionId: "2000000123456789", productId: "com.example.monthly", locale: "en-US")

    static func text(_ count: Int) -> String { String(repeating: "a", count: count) }

    static let plainMessage = UploadMessageRequestBody(header: "Stay a little longer", body: "Here is what is new this month.")

    static func messageWithImage(_ imageId: String) -> UploadMessageRequestBody {
        UploadMessageRequestBody(header: "Before you go", body: "Take a look.",
                                 image: UploadMessageImage(imageIdentifier: imageId, altText: "A red banner"),
                                 headerPosition: .aboveImage)
    }

    static func messageWithBullets(_ imageId: String, count: Int) -> UploadMessageRequestBody {
        UploadMessageRequestBody(header: "What you keep", body: "All of it.",
                                 bulletPoints: (0..<count).map { UploadMessageBulletPoint(text: "Point \($0)", imageIdentifier: imageId, altText: "icon") })
    }
}

/// Records every request a client sends and every answer it gets, passing both on.
final class RecordingTransport: HTTPTransport {
    private let recorded = Locked<[HTTPRequest]>()
    private let answers = Locked<[HTTPResponse]>()
    let next: any HTTPTransport

    init(_ next: any HTTPTransport) { self.next = next }

    var requests: [HTTPRequest] { recorded.value }
    var responses: [HTTPResponse] { answers.value }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        recorded.append(request)
        let response = try await next.send(request)
        answers.append(response)
        return response
    }
}

extension RetentionMessagingError {
    /// `status errorCode` for compact expectations, e.g. "409 4090001".
    var statusAndCode: String {
        if case .api(let status, let code, _) = self { return "\(status) \(code.map(String.init) ?? "-")" }
        if case .noAPIAccess = self { return "404 no-access" }
        return description
    }
}

/// How a test reaches the emulator: in-process, or the real libcurl client over loopback HTTP.
enum Face: String, CaseIterable, Sendable, CustomStringConvertible {
    case inProcess
    case loopback
    var description: String { rawValue }
}

/// An emulator reachable through one face, with a client factory for either environment.
final class Harness: Sendable {
    let app: TestApp
    let emulator: Emulator
    let face: Face
    let clock: any RetentionClock
    private let servers: [Environment: EmulatorServer]
    private let curl: CurlHTTPClient

    init(_ face: Face, app: TestApp = TestApp(), emulator: Emulator? = nil, clock: any RetentionClock = SystemClock()) throws {
        self.app = app
        self.face = face
        self.clock = clock
        let emulator = emulator ?? app.emulator(clock: clock)
        self.emulator = emulator
        curl = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 20, environment: [:]))
        if face == .loopback {
            servers = [
                .sandbox: try EmulatorServer(emulator: emulator, environment: .sandbox),
                .production: try EmulatorServer(emulator: emulator, environment: .production),
            ]
        } else {
            servers = [:]
        }
    }

    deinit {
        for server in servers.values { server.stop() }
    }

    var transport: any HTTPTransport { face == .loopback ? curl : emulator.transport() }

    func client(_ environment: Environment = .sandbox, pacing: Pacing = .unlimited, retry: RetryPolicy = .default,
                transport: (any HTTPTransport)? = nil) -> RetentionMessagingClient {
        app.client(environment, transport: transport ?? self.transport, endpoint: servers[environment]?.apiEndpoint,
                   pacing: pacing, clock: clock, retry: retry)
    }

    /// Posts an admin call (`/emulator/...`) through the same face.
    func admin(_ method: String, _ path: String, in environment: Environment) async throws -> HTTPResponse {
        let base = servers[environment]?.baseURL.absoluteString
            ?? (environment == .sandbox ? "https://api.storekit-sandbox.apple.com" : "https://api.storekit.apple.com")
        return try await transport.send(HTTPRequest(method: method, url: URL(string: base + path)!))
    }
}

extension EmulatorState {
    /// A state with the given messages and images, for tests that start from a remote state.
    static func with(messages: [String: (MessageState, UploadMessageRequestBody)] = [:],
                     images: [String: (ImageState, ImageSize)] = [:],
                     defaults: [DefaultKey: String] = [:], performanceTests: [String: PerformanceTestStatus] = [:],
                     transactions: [SandboxTransaction] = []) -> EmulatorState {
        EmulatorState(
            messages: messages.mapValues { EmulatedMessage(state: $0.0, body: $0.1) },
            images: images.mapValues { state, size in
                EmulatedImage(state: state, size: size, width: size == .bulletPoint ? 1024 : 3840, height: size == .bulletPoint ? 1024 : 160,
                              byteCount: 100, sha256: String(repeating: "0", count: 64))
            },
            defaults: defaults, performanceTests: performanceTests,
            testTransactions: Dictionary(transactions.map { ($0.originalTransactionId, $0) }, uniquingKeysWith: { _, last in last }))
    }
}
