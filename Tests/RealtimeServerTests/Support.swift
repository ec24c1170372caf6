import Basics
import Crypto
import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RealtimeServer
import RetentionMessagingModels
import Runtime
import Synchronization
import Testing
import TestSupport

let appAppleId: Int64 = 1_234_567_890
let bundleId = "com.example.app"
let monthly = "com.example.monthly"
let yearly = "com.example.yearly"
let weekly = "com.example.weekly"
let messageId = "00000000-0000-5000-8000-000000000001"
let alternateMessageId = "00000000-0000-5000-8000-000000000002"
let offerMessageId = "00000000-0000-5000-8000-000000000003"
let otherMessageId = "00000000-0000-5000-8000-000000000004"

/// A snapshot that answers monthly with a message, yearly with the monthly plan, weekly with an
/// offer, and nothing else; `messageFor` changes the monthly message (to tell two snapshots apart).
func snapshot(environment: RetentionMessagingModels.Environment = .production, app: Int64 = appAppleId,
              bundle: String = bundleId, monthlyMessage: String = messageId, extraRules: Int = 0) throws -> RuntimeSnapshot {
    var rules = [
        SnapshotRule(id: "monthly-message", version: "0123456789abcdef", match: SnapshotMatch(products: [monthly]),
                     response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": monthlyMessage])),
        SnapshotRule(id: "yearly-to-monthly", version: "0123456789abcdef", match: SnapshotMatch(products: [yearly]),
                     response: SnapshotResponse(kind: .alternateProduct, message: "switch", messageIdentifiers: ["en-US": alternateMessageId],
                                                productId: monthly, billingPlanType: nil)),
        SnapshotRule(id: "weekly-offer", version: "0123456789abcdef", match: SnapshotMatch(products: [weekly]),
                     response: SnapshotResponse(kind: .promotionalOffer, message: "offer", messageIdentifiers: ["en-US": offerMessageId],
                                                offerIdentifier: "half-price")),
    ]
    for index in 0..<extraRules {
        rules.insert(SnapshotRule(id: "filler-\(index)", version: "0123456789abcdef",
                                  match: SnapshotMatch(products: ["com.example.unused\(index)"]),
                                  response: SnapshotResponse(kind: .message, message: "filler", messageIdentifiers: ["en-US": otherMessageId])),
                     at: 0)
    }
    return try RuntimeSnapshot(bundleId: bundle, appAppleId: app, environment: environment, localeFallbacks: [:], rules: rules).sealed()
}

func requestBody(product: String = monthly, environment: String = "Production", app: Int64 = appAppleId,
                 signedDate: Date = Date(), transaction: String = "2000000000000001") -> DecodedRealtimeRequestBody {
    DecodedRealtimeRequestBody(originalTransactionId: transaction, appAppleId: app, productId: product, userLocale: "en-US",
                               requestIdentifier: UUID().uuidString.lowercased(), environment: environment,
                               signedDate: Int64(signedDate.timeIntervalSince1970 * 1000))
}

/// A realtime service with its snapshot file, its Apple-style chain and the log lines it wrote,
/// answering in-process (its handler called directly, as the server calls it) or, for what only a
/// socket shows — connections, shedding, framing — on a free loopback port.
final class RunningService: Sendable {
    enum Transport { case inProcess, live }

    let chain: AppleStyleSigningChain
    let offerKey = ES256PrivateKey.generate()
    let directory: URL
    let snapshotURL: URL
    let service: RealtimeService
    private let liveServer: HTTPServer?
    let logLines = LogLines()
    let path = "/apple/production"

    /// `afterAnswer` runs on the serving thread after each realtime answer (a test's stand-in for
    /// a loop kept busy); `maxConnections`, `eventLoops` and `shedAfter` are the server's settings.
    init(snapshot initial: RuntimeSnapshot? = nil, signing: Bool = true, pollInterval: TimeInterval = 3600,
         maxConnections: Int = 512, eventLoops: Int = 2, shedAfter: TimeInterval? = nil,
         recording: RealtimeService.Recording? = nil, transport: Transport = .inProcess,
         afterAnswer: (@Sendable (HTTPResponse) -> Void)? = nil) throws {
        chain = try AppleStyleSigningChain()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        snapshotURL = directory.appendingPathComponent("snapshot.json")
        if let initial { try initial.encoded().write(to: snapshotURL) }
        let lines = logLines
        var configuration = RealtimeService.Configuration(
            endpoints: [RealtimeEndpoint(path: path, environment: .production, source: FileSnapshotSource(path: snapshotURL.path))],
            trustedRoots: [chain.root], maxAge: 300,
            signingKey: signing ? OfferSigningKey(keyId: "KEY1234567", issuerId: "issuer", privateKey: offerKey) : nil,
            pollInterval: pollInterval, clock: SystemClock(), shedAfter: shedAfter)
        configuration.recording = recording
        service = RealtimeService(configuration: configuration, log: RequestLog(sink: { line in lines.append(line) }))
        let service = service
        if transport == .live {
            let server = try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, maxHeaderSize: 16 * 1024,
                                                                               maxConnections: maxConnections, idleTimeout: 10, requestTimeout: 5,
                                                                               eventLoops: eventLoops),
                                        synchronousHandler: { request in
                                            let response = service.handle(request)
                                            afterAnswer?(response)
                                            return response
                                        })
            service.metrics.showConnections { server.statistics }
            liveServer = server
        } else {
            liveServer = nil
        }
        service.startPolling()
    }

    /// The loopback server of a `.live` service.
    var server: HTTPServer {
        guard let liveServer else { preconditionFailure("an in-process RunningService has no server: start it with transport: .live") }
        return liveServer
    }

    /// One request as the server hands it to the service: through the socket when live, else directly.
    func exchange(_ method: String, _ target: String, body: Data = Data(), client: CurlHTTPClient = CurlHTTPClient()) async throws -> HTTPResponse {
        let headers = body.isEmpty ? [] : [(name: "Content-Type", value: "application/json")]
        guard let liveServer else {
            return service.handle(HTTPServerRequest(method: method, target: target, headers: headers, body: body))
        }
        return try await client.send(HTTPRequest(method: method, url: URL(string: liveServer.baseURL.absoluteString + target)!,
                                                 headers: headers.map { ($0.name, $0.value) }, body: body))
    }

    deinit {
        service.stopPolling()
        liveServer?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var log: [String] { logLines.value }

    func publish(_ snapshot: RuntimeSnapshot) throws {
        try publish(snapshot.encoded())
    }

    func publish(_ data: Data) throws {
        // Written aside and renamed, as a store does, so a reader never sees half a file.
        let temporary = directory.appendingPathComponent("next.json")
        try data.write(to: temporary)
        _ = rename(temporary.path, snapshotURL.path)
    }

    func signed(_ body: DecodedRealtimeRequestBody, header: JWSHeader? = nil, key: ES256PrivateKey? = nil) throws -> String {
        let header = header ?? JWSHeader(alg: "ES256", x5c: chain.x5c)
        return try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(header)), payloadJSON: Array(try CanonicalJSON.encode(body)),
                            key: key ?? chain.leafKey)
    }

    func post(_ signedPayload: String, client: CurlHTTPClient = CurlHTTPClient()) async throws -> HTTPResponse {
        try await exchange("POST", path, body: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload]), client: client)
    }

    func post(_ body: DecodedRealtimeRequestBody) async throws -> HTTPResponse {
        try await post(signed(body))
    }

    func postNotification(_ signedPayload: String) async throws -> HTTPResponse {
        try await exchange("POST", "/notifications", body: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload]))
    }

    func get(_ path: String) async throws -> HTTPResponse {
        try await exchange("GET", path)
    }
}

func json(_ response: HTTPResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
}

/// Every byte written under `folder` (segments, spool, facts tables), as text, to search for what must
/// never be written.
func allBytes(under folder: URL) -> String {
    var text = ""
    let walker = FileManager.default.enumerator(atPath: folder.path)
    while let relative = walker?.nextObject() as? String {
        if let data = FileManager.default.contents(atPath: folder.appendingPathComponent(relative).path) {
            text += String(decoding: data, as: UTF8.self)
        }
    }
    return text
}
