import Basics
import Crypto
import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

@Suite("Request authentication")
struct AuthenticationTests {
    let app = TestApp()
    let clock = VirtualClock()
    let listURL = URL(string: "https://api.storekit-sandbox.apple.com/inApps/v1/messaging/message/list")!

    func token(key: ES256PrivateKey? = nil, kid: String = TestApp.keyId, iat: Double? = nil, lifetime: Double = 300,
               aud: String = "appstoreconnect-v1", bid: String = TestApp.bundleId, iss: String = TestApp.issuerId,
               withoutIat: Bool = false) throws -> String {
        let issued = iat ?? clock.now()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": kid, "typ": "JWT"], options: [.sortedKeys])
        var fields: [String: Any] = ["iss": iss, "iat": Int(issued), "exp": Int(issued + lifetime), "aud": aud, "bid": bid]
        if withoutIat { fields["iat"] = nil }
        let claims = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return try JWS.sign(headerJSON: Array(header), payloadJSON: Array(claims), key: key ?? app.key)
    }

    func status(_ authorization: String?) async -> Int? {
        let emulator = app.emulator(clock: clock)
        let headers = authorization.map { [(name: "Authorization", value: $0)] } ?? []
        return await emulator.handle(HTTPRequest(method: "GET", url: listURL, headers: headers), environment: nil)?.status
    }

    @Test("the client's token has Apple's header and claims, and is fresh for every request")
    func clientToken() async throws {
        let emulator = app.emulator(clock: clock)
        let recorder = RecordingTransport(emulator.transport())
        let client = app.client(transport: recorder, clock: clock)
        _ = try await client.getMessageList()
        clock.advance(by: 2)
        _ = try await client.getImageList()

        let tokens = recorder.requests.compactMap { $0.header("Authorization") }.map { String($0.dropFirst("Bearer ".count)) }
        #expect(tokens.count == 2)
        #expect(Set(tokens).count == 2)
        let decoded = try JWS.decode(tokens[0])
        #expect(decoded.header.alg == "ES256")
        #expect(decoded.header.kid == TestApp.keyId)
        #expect(decoded.header.typ == "JWT")
        #expect(decoded.verify(with: app.key.publicKey))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(decoded.payloadJSON)) as? [String: Any])
        #expect(claims["iss"] as? String == TestApp.issuerId)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == TestApp.bundleId)
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(iat == Int(clock.now()) - 2)
        #expect(exp - iat == 300)
    }

    @Test("a valid token is accepted")
    func valid() async throws {
        #expect(await status("Bearer " + (try token())) == 200)
    }

    @Test("the emulator refuses a token signed with another key")
    func wrongKey() async throws {
        #expect(await status("Bearer " + (try token(key: ES256PrivateKey.generate()))) == 401)
    }

    @Test("the emulator refuses an expired token")
    func expired() async throws {
        #expect(await status("Bearer " + (try token(iat: clock.now() - 600))) == 401)
    }

    @Test("the emulator refuses a token that lives longer than an hour")
    func tooLong() async throws {
        #expect(await status("Bearer " + (try token(lifetime: 3601))) == 401)
    }

    @Test("the emulator refuses the wrong audience, bundle id or key id")
    func wrongClaims() async throws {
        #expect(await status("Bearer " + (try token(aud: "appstoreconnect-v2"))) == 401)
        #expect(await status("Bearer " + (try token(bid: "com.example.other"))) == 401)
        #expect(await status("Bearer " + (try token(kid: "OTHERKEY00"))) == 401)
    }

    @Test("a token without iat, as Apple's own Python library sends, is accepted when exp is at most an hour ahead")
    func withoutIat() async throws {
        #expect(await status("Bearer " + (try token(lifetime: 300, withoutIat: true))) == 200)
        #expect(await status("Bearer " + (try token(lifetime: 3600, withoutIat: true))) == 200)
        #expect(await status("Bearer " + (try token(lifetime: 7200, withoutIat: true))) == 401)
        #expect(await status("Bearer " + (try token(iat: clock.now() - 600, withoutIat: true))) == 401)
    }

    @Test("a token without iat is still refused for a wrong aud, kid, iss, bid or signature")
    func withoutIatStillChecked() async throws {
        #expect(await status("Bearer " + (try token(aud: "appstoreconnect-v2", withoutIat: true))) == 401)
        #expect(await status("Bearer " + (try token(kid: "OTHERKEY00", withoutIat: true))) == 401)
        #expect(await status("Bearer " + (try token(bid: "com.example.other", withoutIat: true))) == 401)
        #expect(await status("Bearer " + (try token(iss: "11111111-1111-4111-8111-111111111111", withoutIat: true))) == 401)
        #expect(await status("Bearer " + (try token(key: ES256PrivateKey.generate(), withoutIat: true))) == 401)
    }

    @Test("a 401 has no body, like Apple's, but the emulator's verbose log says why")
    func unauthorizedLogsWhy() async throws {
        let emulator = app.emulator(clock: clock)
        let lines = LogLines()
        emulator.onLog { lines.append($0) }
        let response = await emulator.handle(HTTPRequest(method: "GET", url: listURL,
                                                         headers: [(name: "Authorization", value: "Bearer " + (try token(kid: "OTHERKEY00")))]),
                                             environment: nil)
        #expect(response?.status == 401)
        #expect(response?.body.isEmpty == true)
        #expect(lines.value.contains { $0.contains("401") && $0.contains("kid does not match") })
    }

    @Test("Apple's 401, which says nothing, gets the likely causes in order, the App's bundle id among them")
    func unauthorizedMessage() async {
        // Apple's 401: no body, no reason.
        let apple = AnsweringTransport(HTTPResponse(status: 401))
        let client = TestApp().client(transport: apple, clock: clock)
        let text = (await apiError { _ = try await client.getMessageList() })?.description ?? ""
        let causes = ["App Store Connect API key", "key id", "bundle id \(TestApp.bundleId)", "clock is more than a minute off"]
        let places = causes.compactMap { text.range(of: $0)?.lowerBound }
        #expect(places.count == causes.count, "\(text)")
        #expect(places == places.sorted(), "\(text)")
    }

    @Test("the emulator's 401 still has no body, and the client quotes the reason it names beside it")
    func emulatorUnauthorizedReason() async {
        let emulator = app.emulator(clock: clock)
        let client = TestApp().client(transport: emulator.transport(), clock: clock)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.status == 401 && error?.isUnauthorized == true)
        #expect(error?.description.contains("the emulator refused the request's token for \(TestApp.bundleId): "
                                            + "signature does not verify with the configured key") == true, "\(String(describing: error))")
    }

    @Test("a token for an app the emulator does not serve gets Apple's bare 401, and the client names the bundle id")
    func unknownBundleId() async throws {
        let emulator = app.emulator(clock: clock)
        let stranger = Credentials(keyId: TestApp.keyId, issuerId: TestApp.issuerId, bundleId: "com.example.stranger", privateKey: app.key)
        let client = RetentionMessagingClient(environment: .sandbox, credentials: stranger, transport: emulator.transport(),
                                              pacing: .unlimited, clock: clock)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.status == 401)
        let text = error?.description ?? ""
        #expect(text.contains("the token's bundle id (bid) com.example.stranger is not an app of this emulator, which serves \(TestApp.bundleId)"), "\(text)")
        #expect(text.contains("--bundle-id \(TestApp.bundleId),com.example.stranger"), "\(text)")
        let raw = await emulator.handle(HTTPRequest(method: "GET", url: listURL,
                                                    headers: [(name: "Authorization", value: "Bearer " + (try token(bid: "com.example.stranger")))]),
                                        environment: nil)
        #expect(raw?.status == 401 && raw?.body.isEmpty == true)
        #expect(emulator.bundleIds == [TestApp.bundleId])
    }

    @Test("a client whose issuer id is not a UUID sends nothing")
    func issuerMustBeUUID() async {
        let emulator = app.emulator(clock: clock)
        let credentials = Credentials(keyId: TestApp.keyId, issuerId: "my-team", bundleId: TestApp.bundleId, privateKey: app.key)
        let client = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: emulator.transport(),
                                              pacing: .unlimited, clock: clock)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.description.contains("issuer id is not a UUID") == true)
        #expect(emulator.requestCount(in: .sandbox) == 0)
    }

    @Test("the emulator refuses a request without a bearer token")
    func missing() async throws {
        #expect(await status(nil) == 401)
        #expect(await status("Basic dXNlcjpwYXNz") == 401)
        #expect(await status("Bearer not.a.token") == 401)
    }

    @Test("a request held up past its token's five minutes is sent again with a fresh token, and succeeds")
    func tokenExpiredOnItsWay() async throws {
        let emulator = app.emulator(clock: clock)
        let refusals = LogLines()
        emulator.onLog { line in if line.contains("401") { refusals.append(line) } }
        // Past the token's 300 s and the emulator's 60 s of leeway before the emulator sees it.
        let recorder = RecordingTransport(HeldUpTransport(emulator.transport(), clock: clock, seconds: 361))
        let client = app.client(transport: recorder, clock: clock)

        _ = try await client.getMessageList()
        #expect(refusals.value.count == 1 && refusals.value[0].hasSuffix("→ 401 (token expired)"), "\(refusals.value)")
        #expect(recorder.responses.map { $0.status } == [401, 200])
        let tokens = recorder.requests.compactMap { $0.header("Authorization") }
        #expect(Set(tokens).count == 2)
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 2, retries: 1))
    }

    @Test("Apple's bare 401 for a token that expired on its way is tried again with fresh tokens, three times at most, then reported")
    func tokenExpiredTwice() async {
        let held = HeldUpTransport(AnsweringTransport(HTTPResponse(status: 401)), clock: clock, seconds: 300, limit: .max)
        let client = app.client(transport: held, clock: clock)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.isUnauthorized == true)
        #expect(held.heldRequests == 4)
        // A 401 for a token well within its lifetime is a wrong key or app, and is not sent again.
        let fresh = HeldUpTransport(AnsweringTransport(HTTPResponse(status: 401)), clock: clock, seconds: 239, limit: .max)
        let second = app.client(transport: fresh, clock: clock)
        #expect(await apiError { _ = try await second.getMessageList() }?.isUnauthorized == true)
        #expect(fresh.heldRequests == 1)
    }

    @Test("a client whose key the emulator does not know gets a typed 401")
    func clientWithWrongKey() async {
        let emulator = app.emulator(clock: clock)
        let stranger = TestApp()
        let client = stranger.client(transport: emulator.transport(), clock: clock)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.status == 401)
        #expect(emulator.requestCount(in: .sandbox) == 1)
    }
}

/// Answers every request with one response, as a server that says only that would.
private struct AnsweringTransport: HTTPTransport {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse { response }
}
