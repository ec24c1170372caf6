import Crypto
import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RealtimeServer
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

@Suite("serve: answering Apple's realtime requests over HTTP")
struct RealtimeServiceTests {
    @Test("a genuine request for each answer kind gets exactly one field")
    func eachAnswerKind() async throws {
        let running = try RunningService(snapshot: try snapshot())
        let message = try await running.post(requestBody(product: monthly))
        #expect(message.status == 200)
        #expect(String(decoding: message.body, as: UTF8.self) == #"{"message":{"messageIdentifier":"\#(messageId)"}}"#)

        let alternate = try json(try await running.post(requestBody(product: yearly)))
        #expect(alternate.keys.sorted() == ["alternateProduct"])
        let product = try #require(alternate["alternateProduct"] as? [String: Any])
        #expect(product["productId"] as? String == monthly)
        #expect(product["messageIdentifier"] as? String == alternateMessageId)

        let offer = try json(try await running.post(requestBody(product: weekly, transaction: "2000000000000042")))
        #expect(offer.keys.sorted() == ["promotionalOffer"])
        let promotional = try #require(offer["promotionalOffer"] as? [String: Any])
        #expect(promotional["messageIdentifier"] as? String == offerMessageId)
        let signature = try JWS.decode(try #require(promotional["promotionalOfferSignatureV2"] as? String))
        #expect(signature.verify(with: running.offerKey.publicKey))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(signature.payloadJSON)) as? [String: Any])
        #expect(claims["transactionId"] as? String == "2000000000000042")
        #expect(claims["bid"] as? String == bundleId)
        #expect(claims["offerIdentifier"] as? String == "half-price")

        let nothing = try await running.post(requestBody(product: "com.example.unknown"))
        #expect(nothing.status == 200)
        #expect(String(decoding: nothing.body, as: UTF8.self) == "{}")
    }

    @Test("serve names the rule that answered only to a request that asks, as the emulator's customers do; Apple, which never asks, is never told")
    func namesTheRuleOnlyWhenAsked() async throws {
        let running = try RunningService(snapshot: try snapshot())
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try running.signed(requestBody(product: monthly))])
        func answer(_ headers: [(name: String, value: String)]) -> HTTPResponse {
            running.service.handle(HTTPServerRequest(method: "POST", target: running.path,
                                                     headers: [(name: "Content-Type", value: "application/json")] + headers, body: body))
        }
        let asApple = answer([])
        #expect(asApple.status == 200 && asApple.header(RealtimeResponseBody.ruleHeader) == nil)
        let asked = answer([(name: RealtimeResponseBody.askRuleHeader, value: "1")])
        let rule = try #require(asked.header(RealtimeResponseBody.ruleHeader))
        #expect(rule == "monthly-message", "the rule that answered the monthly product: \(rule)")
        #expect(asked.body == asApple.body, "the body Apple reads is the same either way")
    }

    @Test("every forgery is answered 401 with no body and counted by reason")
    func forgeries() async throws {
        let running = try RunningService(snapshot: try snapshot())
        let other = try AppleStyleSigningChain(name: "impostor")
        let expiredKey = ES256PrivateKey.generate()
        let expiredLeaf = try X509Certificate.issue(commonName: "expired leaf", publicKey: expiredKey.publicKey,
                                                    issuer: running.chain.intermediate, issuerKey: running.chain.intermediateKey,
                                                    isCertificateAuthority: false, notBefore: Date(timeIntervalSinceNow: -400 * 86_400),
                                                    notAfter: Date(timeIntervalSinceNow: -300 * 86_400), serial: 9,
                                                    markerOIDs: [AppleStyleSigningChain.leafOID])
        let body = requestBody()
        let chain = running.chain
        let good = try running.signed(body)
        let parts = good.split(separator: ".")
        var tamperedBody = body
        tamperedBody.productId = weekly

        let forgeries: [(String, String)] = [
            ("wrong alg", try running.signed(body, header: JWSHeader(alg: "ES384", x5c: chain.x5c))),
            ("two certificates", try running.signed(body, header: JWSHeader(alg: "ES256", x5c: Array(chain.x5c.prefix(2))))),
            ("untrusted root", try other.sign(payloadJSON: Array(try CanonicalJSON.encode(body)))),
            ("leaf without OID", try running.signed(body, header: JWSHeader(alg: "ES256", x5c: [chain.x5c[1], chain.x5c[2], chain.x5c[2]]),
                                                    key: chain.intermediateKey)),
            ("wrong signer", try running.signed(body, key: ES256PrivateKey.generate())),
            ("tampered body", "\(parts[0]).\(Base64URL.encode(Array(try CanonicalJSON.encode(tamperedBody)))).\(parts[2])"),
            ("expired leaf", try running.signed(requestBody(), header: JWSHeader(alg: "ES256", x5c: [
                Base64.encode(expiredLeaf.der), chain.x5c[1], chain.x5c[2]]), key: expiredKey)),
            ("wrong app", try running.signed(requestBody(app: 987_654_321))),
            ("wrong environment", try running.signed(requestBody(environment: "Sandbox"))),
            ("stale signedDate", try running.signed(requestBody(signedDate: Date(timeIntervalSinceNow: -600)))),
            ("Xcode environment", try running.signed(requestBody(environment: "Xcode"))),
            ("not a JWS", "hello"),
        ]
        for (name, payload) in forgeries {
            let response = try await running.post(payload)
            #expect(response.status == 401, "\(name)")
            #expect(response.body.isEmpty, "\(name)")
        }
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        for reason in ["wrong_alg", "wrong_certificate_count", "untrusted_chain", "missing_extension", "bad_signature", "certificate_expired",
                       "wrong_app", "wrong_environment", "stale", "unsupported_environment", "malformed"] {
            #expect(metrics.contains(#"retention_sync_verification_failures_total{environment="production",reason="\#(reason)"}"#), "\(reason)")
        }
        // A genuine payload still verifies after all of that (signed now, as Apple signs each request).
        #expect(try await running.post(try running.signed(body)).status == 200)
    }

    @Test("a signedPayload read in place from the body verifies as the decoded String did: padded, escaped or spaced out")
    func bodyShapes() async throws {
        let running = try RunningService(snapshot: try snapshot(), transport: .live)
        let client = CurlHTTPClient()
        let url = URL(string: running.server.baseURL.absoluteString + running.path)!
        // Each body is made around a payload signed as it is sent, as Apple signs each request: on a
        // starved machine the requests may otherwise reach serve past its five-minute freshness window.
        let accepted: [(String) -> String] = [
            { #"{"signedPayload":"\#($0)"}"# },
            { #" { "signedPayload" : "\#($0)" } "# },
            { #"{"signedPayload":"  \#($0) "}"# },
            { #"{"signedPayload":"\#($0.replacingOccurrences(of: ".", with: "\\u002e"))"}"# },
            { #"{"other":[1],"signedPayload":"\#($0)"}"# },
        ]
        for shape in accepted {
            let body = shape(try running.signed(requestBody()))
            let response = try await client.send(HTTPRequest(method: "POST", url: url, body: Data(body.utf8)))
            #expect(response.status == 200, "\(body.prefix(40))")
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"message":{"messageIdentifier":"\#(messageId)"}}"#)
        }
        let refused: [((String) -> String, Int)] = [
            ({ #"{"signedPayload":"\#($0.dropLast())"}"# }, 401),
            ({ #"{"signedPayload":"\#($0)""# }, 400),
        ]
        for (shape, status) in refused {
            let body = shape(try running.signed(requestBody()))
            let response = try await client.send(HTTPRequest(method: "POST", url: url, body: Data(body.utf8)))
            #expect(response.status == status, "\(body.suffix(40))")
        }
    }

    @Test("oversized and malformed bodies, wrong methods and paths get 4xx, and the service keeps answering")
    func badRequests() async throws {
        let running = try RunningService(snapshot: try snapshot(), transport: .live)
        let client = CurlHTTPClient()
        let url = URL(string: running.server.baseURL.absoluteString + running.path)!
        let big = try await client.send(HTTPRequest(method: "POST", url: url, body: Data(repeating: 0x41, count: 64 * 1024 + 1)))
        #expect(big.status == 413)
        for garbage in ["", "not json", "{}", #"{"signedPayload": 12}"#, "[1,2]"] {
            let response = try await client.send(HTTPRequest(method: "POST", url: url, body: Data(garbage.utf8)))
            #expect(response.status == 400, "\(garbage)")
        }
        let get = try await client.send(HTTPRequest(method: "GET", url: url))
        #expect(get.status == 405)
        #expect(get.header("Allow") == "POST")
        let elsewhere = try await client.send(HTTPRequest(method: "POST", url: running.server.baseURL.appendingPathComponent("other"),
                                                          body: Data("{}".utf8)))
        #expect(elsewhere.status == 404)
        let conflicting = try await rawExchange(port: running.server.port,
            "POST \(running.path) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}")
        #expect(conflicting.hasPrefix("HTTP/1.1 400 "))
        #expect(try await running.post(requestBody()).status == 200)
    }

    @Test("until a first snapshot loads, /readyz is 503 and a genuine request gets {}; then both change")
    func readiness() async throws {
        let running = try RunningService(snapshot: nil)
        #expect(try await running.get("/healthz").status == 200)
        #expect(try await running.get("/readyz").status == 503)
        let early = try await running.post(requestBody())
        #expect(early.status == 200)
        #expect(String(decoding: early.body, as: UTF8.self) == "{}")
        try running.publish(try snapshot())
        running.service.reloadSnapshots()
        #expect(try await running.get("/readyz").status == 200)
        #expect(try json(try await running.post(requestBody())).keys.sorted() == ["message"])
    }

    @Test("a snapshot with offers but no In-App Purchase key is not ready, and offers get {}")
    func noSigningKey() async throws {
        let running = try RunningService(snapshot: try snapshot(), signing: false)
        let readyz = try await running.get("/readyz")
        #expect(readyz.status == 503)
        #expect(String(decoding: readyz.body, as: UTF8.self).contains("promotional offers"))
        #expect(String(decoding: try await running.post(requestBody(product: weekly)).body, as: UTF8.self) == "{}")
        #expect(try json(try await running.post(requestBody(product: monthly))).keys.sorted() == ["message"])
    }

    @Test("a corrupt snapshot, or one for another app or environment, is refused and the previous one keeps serving")
    func refusedSnapshots() async throws {
        let running = try RunningService(snapshot: try snapshot())
        var tampered = String(decoding: try snapshot(monthlyMessage: otherMessageId).encoded(), as: UTF8.self)
        tampered = tampered.replacingOccurrences(of: otherMessageId, with: alternateMessageId)
        let refusals: [(Data, String)] = [
            (Data("{ not json".utf8), "unparsable"),
            (Data(tampered.utf8), "digest_mismatch"),
            (try snapshot(app: 42, bundle: "com.example.other", monthlyMessage: otherMessageId).encoded(), "wrong_app"),
            (try snapshot(environment: .sandbox, monthlyMessage: otherMessageId).encoded(), "wrong_environment"),
        ]
        for (data, reason) in refusals {
            try running.publish(data)
            running.service.reloadSnapshots()
            let answer = try json(try await running.post(requestBody()))
            #expect((answer["message"] as? [String: Any])?["messageIdentifier"] as? String == messageId, "\(reason)")
            let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"retention_sync_snapshot_reload_failures_total{environment="production",reason="\#(reason)"} 1"#))
            #expect(running.log.contains { $0.contains(#""event":"snapshot_refused""#) && $0.contains(#""reason":"\#(reason)""#) })
        }
        #expect(try await running.get("/readyz").status == 200)
        // A good snapshot after the refusals is taken.
        try running.publish(try snapshot(monthlyMessage: otherMessageId))
        running.service.reloadSnapshots()
        let answer = try json(try await running.post(requestBody()))
        #expect((answer["message"] as? [String: Any])?["messageIdentifier"] as? String == otherMessageId)
    }

    @Test("a store rewritten with the same snapshot (another field of the state changed) is not logged as a reload")
    func sameSnapshotIsNoReload() async throws {
        let running = try RunningService(snapshot: try snapshot())
        func loads() -> Int { running.log.filter { $0.contains(#""event":"snapshot_loaded""#) }.count }
        #expect(loads() == 1)
        // The same snapshot in other bytes: the store's version changes, the digest does not.
        let same = try snapshot().encoded()
        let object = try JSONSerialization.jsonObject(with: same)
        try running.publish(try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]))
        running.service.reloadSnapshots()
        #expect(loads() == 1, "\(running.log)")
        // A different snapshot still loads and says so.
        try running.publish(try snapshot(monthlyMessage: otherMessageId))
        running.service.reloadSnapshots()
        #expect(loads() == 2)
    }

    @Test("a snapshot swapped while requests are running fails no request")
    func swapUnderLoad() async throws {
        let running = try RunningService(snapshot: try snapshot(), pollInterval: 0.02)
        let swapper = Task.detached {
            for round in 0..<20 {
                try running.publish(try snapshot(monthlyMessage: round % 2 == 0 ? otherMessageId : messageId))
                try await Task.sleep(for: .milliseconds(15))
            }
        }
        let seen = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let client = CurlHTTPClient()
                    var identifiers: [String] = []
                    for _ in 0..<40 {
                        // Signed as it is sent, as Apple does: a starved machine may take longer than
                        // serve's five-minute freshness window over the whole loop.
                        let response = try await running.post(try running.signed(requestBody()), client: client)
                        #expect(response.status == 200)
                        let answer = try json(response)
                        identifiers.append(try #require((answer["message"] as? [String: Any])?["messageIdentifier"] as? String))
                    }
                    return identifiers
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        try await swapper.value
        #expect(seen.count == 320)
        #expect(Set(seen).isSubset(of: [messageId, otherMessageId]))
        // The last snapshot published (round 19) is the one served once the swaps end.
        running.service.reloadSnapshots()
        let last = try json(try await running.post(try running.signed(requestBody())))
        #expect((last["message"] as? [String: Any])?["messageIdentifier"] as? String == messageId)
    }

    @Test("the request log names a split arm's group as decision events do, and its buckets apart")
    func requestLogNamesTheSplitGroup() async throws {
        var split = try snapshot()
        let index = try #require(split.rules.firstIndex { $0.id == "weekly-offer" })
        split.rules[index].match.split = SnapshotSplit(salt: "offer-test", lowerBucket: 0, upperBucket: 10_000)
        let running = try RunningService(snapshot: try split.sealed())
        _ = try await running.post(try running.signed(requestBody(product: weekly)))
        let line = try #require(running.log.first { $0.contains(#""path":"#) })
        let answered = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(answered["splitGroup"] as? String == "offer-test", "\(line)")
        #expect(answered["splitBuckets"] as? String == "0-10000", "\(line)")
    }

    @Test("the request log has one line per request with the decision, and never the payload or the transaction id")
    func requestLog() async throws {
        let running = try RunningService(snapshot: try snapshot())
        let body = requestBody(product: weekly, transaction: "2000000000009999")
        let signed = try running.signed(body)
        _ = try await running.post(signed)
        _ = try await running.post(try running.signed(requestBody(app: 1)))
        let lines = running.log.filter { $0.contains(#""path":"#) }
        #expect(lines.count == 2)
        let answered = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(answered["outcome"] as? String == "answered")
        #expect(answered["rule"] as? String == "weekly-offer")
        #expect(answered["kind"] as? String == "promotionalOffer")
        #expect(answered["messageIdentifier"] as? String == offerMessageId)
        #expect(answered["requestIdentifier"] as? String == body.requestIdentifier)
        #expect(answered["productId"] as? String == weekly)
        #expect(answered["userLocale"] as? String == "en-US")
        #expect(answered["latencyMs"] is Double)
        #expect(lines[1].contains(#""outcome":"unauthorized""#))
        #expect(lines[1].contains(#""reason":"wrong_app""#))
        let everything = running.log.joined(separator: "\n")
        #expect(!everything.contains("2000000000009999"))
        #expect(!everything.contains(String(signed.split(separator: ".")[2])))
        #expect(!everything.contains(String(signed.split(separator: ".")[1])))
    }

    @Test("/metrics counts requests by outcome, decisions by rule and kind, latency and the snapshot digest")
    func metrics() async throws {
        let snapshot = try snapshot()
        let running = try RunningService(snapshot: snapshot)
        _ = try await running.post(requestBody(product: monthly))
        _ = try await running.post(requestBody(product: "com.example.unknown"))
        let response = try await running.get("/metrics")
        #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains(#"retention_sync_requests_total{environment="production",outcome="answered"} 1"#))
        #expect(text.contains(#"retention_sync_requests_total{environment="production",outcome="no_answer"} 1"#))
        #expect(text.contains(#"retention_sync_decisions_total{environment="production",kind="message",rule="monthly-message"} 1"#))
        #expect(text.contains("retention_sync_request_duration_seconds_count 2"))
        #expect(text.contains(#"retention_sync_snapshot_info{digest="\#(snapshot.digest)",environment="production"} 1"#))
        #expect(text.contains("retention_sync_snapshot_age_seconds "))
    }
}

/// Sends raw bytes on one TCP connection and reads until the server closes it, on its own thread.
func rawExchange(port: UInt16, _ text: String) async throws -> String {
    try await LoopbackConnection.exchange(port: port, text)
}
