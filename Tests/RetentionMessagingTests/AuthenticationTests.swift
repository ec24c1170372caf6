import Crypto
import Emulator
import Foundation
import HTTP
import RetentionMessaging
import RetentionMessagingModels
import Testing

@Suite("Request authentication")
struct AuthenticationTests {
    let app = TestApp()
    let clock = VirtualClock()
    let listURL = URL(string: "https://api.storekit-sandbox.apple.com/inApps/v1/messaging/message/list")!

    func token(key: ES256PrivateKey? = nil, kid: String = TestApp.keyId, iat: Double? = nil, lifetime: Double = 300,
               aud: String = "appstoreconnect-v1", bid: String = TestApp.bundleId) throws -> String {
        let issued = iat ?? clock.now()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": kid, "typ": "JWT"], options: [.sortedKeys])
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": TestApp.issuerId, "iat": Int(issued), "exp": Int(issued + lifetime), "aud": aud, "bid": bid,
        ], options: [.sortedKeys])
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

    @Test("the emulator refuses a request without a bearer token")
    func missing() async throws {
        #expect(await status(nil) == 401)
        #expect(await status("Basic dXNlcjpwYXNz") == 401)
        #expect(await status("Bearer not.a.token") == 401)
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
