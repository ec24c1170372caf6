import Crypto
import Emulator
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing

/// Calls the emulator's Get Notification History the way an App Store Server API client does.
struct HistoryCaller {
    let app: TestApp
    let emulator: Emulator

    /// A fresh App Store Server API token for the app, on the real clock (the emulator's default).
    func bearer() throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": TestApp.keyId, "typ": "JWT"], options: [.sortedKeys])
        let claims = try JSONSerialization.data(withJSONObject: ["iss": TestApp.issuerId, "iat": now, "exp": now + 300,
                                                                 "aud": "appstoreconnect-v1", "bid": TestApp.bundleId], options: [.sortedKeys])
        return "Bearer " + (try JWS.sign(headerJSON: Array(header), payloadJSON: Array(claims), key: app.key))
    }

    struct Answer {
        var status: Int
        var page: NotificationHistoryResponse?
        var error: ErrorPayload?
    }

    func call(_ body: String, token: String? = nil, environment: Environment = .sandbox, authorized: Bool = true) async throws -> Answer {
        let host = environment == .sandbox ? "api.storekit-sandbox.apple.com" : "api.storekit.apple.com"
        let query = token.map { "?paginationToken=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        let url = URL(string: "https://\(host)\(NotificationHistoryFacts.path)\(query)")!
        let headers = authorized ? [(name: "Authorization", value: try bearer()), (name: "Content-Type", value: "application/json")] : []
        let response = try #require(await emulator.handle(HTTPRequest(method: "POST", url: url, headers: headers, body: Data(body.utf8)),
                                                          environment: nil))
        return Answer(status: response.status,
                      page: response.status == 200 ? try JSONDecoder().decode(NotificationHistoryResponse.self, from: response.body) : nil,
                      error: try? JSONDecoder().decode(ErrorPayload.self, from: response.body))
    }
}

@Suite("Get Notification History on the emulator")
struct NotificationHistoryTests {
    let app = TestApp()
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour

    var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func record(_ number: Int, at date: Int64, type: String = "DID_RENEW", subtype: String? = nil, original: String = "2000000000000001",
                transactionId: String? = nil, result: String? = "SUCCESS") -> NotificationHistoryRecord {
        NotificationHistoryRecord(signedPayload: "payload-\(number)", signedDate: date, notificationType: type, subtype: subtype,
                                  notificationUUID: Fixtures.uuid(number), transactionId: transactionId ?? original, originalTransactionId: original,
                                  sendAttempts: result.map { [SendAttemptItem(attemptDate: date, sendAttemptResult: $0)] } ?? [])
    }

    func body(start: Int64, end: Int64, extra: String = "") -> String {
        #"{"startDate":\#(start),"endDate":\#(end)\#(extra)}"#
    }

    @Test("45 notifications come back as pages of 20, 20 and 5 in signedDate order, each token good only for the same body")
    func paging() async throws {
        let emulator = app.emulator()
        let now = nowMs
        // Produced out of date order: the answer is ordered by signedDate all the same.
        let records = (0..<45).map { record($0, at: now - Self.day + Int64(($0 * 7) % 45) * 60_000) }
        emulator.appendNotificationHistory(records, in: .sandbox)
        let caller = HistoryCaller(app: app, emulator: emulator)
        let request = body(start: now - 2 * Self.day, end: now + Self.day)

        var pages: [NotificationHistoryResponse] = []
        var token: String?
        repeat {
            let answer = try await caller.call(request, token: token)
            #expect(answer.status == 200)
            let page = try #require(answer.page)
            pages.append(page)
            token = page.paginationToken
        } while token != nil && pages.count < 5

        #expect(pages.map { $0.notificationHistory?.count ?? 0 } == [20, 20, 5])
        #expect(pages.map { $0.hasMore } == [true, true, false])
        let payloads = pages.flatMap { $0.notificationHistory ?? [] }.compactMap(\.signedPayload)
        let expected = records.sorted { $0.signedDate < $1.signedDate }.map(\.signedPayload)
        #expect(payloads == expected)

        let first = try #require(try await caller.call(request).page?.paginationToken)
        let otherBody = try await caller.call(body(start: now - 2 * Self.day, end: now + 2 * Self.day), token: first)
        #expect(otherBody.status == 400)
        #expect(otherBody.error?.errorCode == 4_000_014)
        let garbage = try await caller.call(request, token: "not-a-token")
        #expect(garbage.error?.errorCode == 4_000_014)
        let same = try await caller.call(request, token: first)
        #expect(same.page?.notificationHistory?.first?.signedPayload == expected[20])
    }

    static let refusals: [(String, String, Int)] = [
        ("startDate missing", #"{"endDate":END}"#, 4_000_015),
        ("startDate not a number", #"{"startDate":"yesterday","endDate":END}"#, 4_000_015),
        ("endDate missing", #"{"startDate":START}"#, 4_000_016),
        ("endDate not a number", #"{"startDate":START,"endDate":1.5}"#, 4_000_016),
        ("startDate equal to endDate", #"{"startDate":START,"endDate":START}"#, 4_000_013),
        ("startDate after endDate", #"{"startDate":END,"endDate":START}"#, 4_000_013),
        ("startDate 31 days back in sandbox", #"{"startDate":OLD,"endDate":END}"#, 4_000_012),
        ("an unknown notificationType", #"{"startDate":START,"endDate":END,"notificationType":"NOT_A_TYPE"}"#, 4_000_018),
        ("a subtype the type never has", #"{"startDate":START,"endDate":END,"notificationType":"DID_RENEW","notificationSubtype":"VOLUNTARY"}"#, 4_000_018),
        ("a subtype without a type", #"{"startDate":START,"endDate":END,"notificationSubtype":"VOLUNTARY"}"#, 4_000_018),
        ("transactionId with notificationType", #"{"startDate":START,"endDate":END,"notificationType":"EXPIRED","transactionId":"2000000000000001"}"#, 4_000_019),
        ("a transactionId that is not one", #"{"startDate":START,"endDate":END,"transactionId":"abc"}"#, 4_000_006),
    ]

    @Test("a request Apple refuses gets Apple's error code", arguments: refusals)
    func refusal(_ name: String, _ template: String, _ code: Int) async throws {
        let now = nowMs
        let body = template.replacingOccurrences(of: "START", with: String(now - Self.day))
            .replacingOccurrences(of: "END", with: String(now))
            .replacingOccurrences(of: "OLD", with: String(now - 31 * Self.day))
        let answer = try await HistoryCaller(app: app, emulator: app.emulator()).call(body)
        #expect(answer.status == 400, "\(name)")
        #expect(answer.error?.errorCode == code, "\(name)")
        #expect(answer.error?.errorMessage.isEmpty == false)
    }

    @Test("sandbox reaches 30 days back and production 180, counted from the emulator's clock")
    func windows() async throws {
        let emulator = app.emulator()
        let caller = HistoryCaller(app: app, emulator: emulator)
        let now = nowMs
        #expect(try await caller.call(body(start: now - 29 * Self.day, end: now)).status == 200)
        #expect(try await caller.call(body(start: now - 31 * Self.day, end: now), environment: .production).status == 200)
        #expect(try await caller.call(body(start: now - 181 * Self.day, end: now), environment: .production).error?.errorCode == 4_000_012)
        // Once a simulation moved the clock 10 days on, 25 days back from the real now is 35 days back.
        emulator.setClockOffset(10 * 86_400)
        #expect(try await caller.call(body(start: now - 25 * Self.day, end: now)).error?.errorCode == 4_000_012)
    }

    @Test("an endDate in the future counts as the emulator's now")
    func futureEndDate() async throws {
        let emulator = app.emulator()
        let now = nowMs
        emulator.appendNotificationHistory([record(1, at: now - Self.hour), record(2, at: now + Self.hour)], in: .sandbox)
        let caller = HistoryCaller(app: app, emulator: emulator)
        let request = body(start: now - Self.day, end: now + 10 * Self.day)
        #expect(try await caller.call(request).page?.notificationHistory?.compactMap(\.signedPayload) == ["payload-1"])
        emulator.setClockOffset(2 * 3600)
        #expect(try await caller.call(request).page?.notificationHistory?.compactMap(\.signedPayload) == ["payload-1", "payload-2"])
    }

    @Test("filters: type and subtype, any transaction of the subscription, only failures")
    func filters() async throws {
        let emulator = app.emulator()
        let now = nowMs
        emulator.appendNotificationHistory([
            record(1, at: now - 5 * Self.hour, type: "DID_RENEW", original: "2000000000000001"),
            record(2, at: now - 4 * Self.hour, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", original: "2000000000000002",
                   result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE"),
            record(3, at: now - 3 * Self.hour, type: "EXPIRED", subtype: "VOLUNTARY", original: "2000000000000002", result: nil),
            record(4, at: now - 2 * Self.hour, type: "DID_RENEW", original: "2000000000000001", transactionId: "2000000000000077"),
        ], in: .sandbox)
        let caller = HistoryCaller(app: app, emulator: emulator)
        func payloads(_ extra: String) async throws -> [String] {
            try await caller.call(body(start: now - Self.day, end: now, extra: extra)).page?.notificationHistory?.compactMap(\.signedPayload) ?? []
        }
        #expect(try await payloads(#","notificationType":"DID_RENEW""#) == ["payload-1", "payload-4"])
        #expect(try await payloads(#","notificationType":"EXPIRED","notificationSubtype":"VOLUNTARY""#) == ["payload-3"])
        #expect(try await payloads(#","transactionId":"2000000000000077""#) == ["payload-1", "payload-4"])
        #expect(try await payloads(#","transactionId":"2000000000000002""#) == ["payload-2", "payload-3"])
        #expect(try await payloads(#","onlyFailures":true"#) == ["payload-2", "payload-3"])
        #expect(emulator.notificationHistory(in: .production).isEmpty)
    }

    @Test("without a valid token the answer is 401, as on every API route")
    func unauthorized() async throws {
        let now = nowMs
        let answer = try await HistoryCaller(app: app, emulator: app.emulator()).call(body(start: now - Self.day, end: now), authorized: false)
        #expect(answer.status == 401)
    }

    @Test("over loopback, /production/… reaches production's history and the answer names its environment")
    func loopback() async throws {
        let emulator = app.emulator()
        let now = nowMs
        emulator.appendNotificationHistory([record(1, at: now - Self.hour)], in: .production)
        let server = try EmulatorServer(emulator: emulator, environment: .sandbox)
        defer { server.stop() }
        let client = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 10, environment: [:]))
        let caller = HistoryCaller(app: app, emulator: emulator)
        func send(_ prefix: String) async throws -> HTTPResponse {
            try await client.send(HTTPRequest(
                method: "POST", url: URL(string: server.baseURL.absoluteString + prefix + NotificationHistoryFacts.path)!,
                headers: [(name: "Authorization", value: try caller.bearer()), (name: "Content-Type", value: "application/json")],
                body: Data(body(start: now - Self.day, end: now).utf8)))
        }
        let production = try await send("/production")
        #expect(production.status == 200)
        #expect(production.header(Emulator.environmentHeader) == "production")
        #expect(try JSONDecoder().decode(NotificationHistoryResponse.self, from: production.body).notificationHistory?.count == 1)
        let sandbox = try await send("")
        #expect(sandbox.header(Emulator.environmentHeader) == "sandbox")
        #expect(try JSONDecoder().decode(NotificationHistoryResponse.self, from: sandbox.body).notificationHistory?.isEmpty == true)
    }
}
