import Basics
import Crypto
import Foundation
import HTTPCore
import HTTPServer
import RealtimeServer
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

/// What serve answers an Advanced Commerce customer, decoded by Apple's own Python library
/// (app-store-server-library, installed by `.ci/setup --test` into `.build/tools`): its
/// RealtimeResponseBody and AdvancedCommerceInfo models, then the signed SubscriptionModifyInAppRequest
/// verified with PyJWT and structured into the library's AdvancedCommerceSubscriptionModifyInAppRequest.
@Suite struct AppleLibraryDecodesAnswerTests {
    static let decoder = #"""
    import base64, json, sys
    import jwt
    from cryptography.hazmat.primitives import serialization
    from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    from appstoreserverlibrary.models.RealtimeResponseBody import RealtimeResponseBody
    from appstoreserverlibrary.models.AdvancedCommerceSubscriptionModifyInAppRequest import AdvancedCommerceSubscriptionModifyInAppRequest

    body = json.load(open(sys.argv[1]))
    answer = _get_cattrs_converter(RealtimeResponseBody).structure(body, RealtimeResponseBody)
    info = answer.advancedCommerceInfo
    wrapper = json.loads(base64.b64decode(info.advancedCommerceData, validate=True))
    key = serialization.load_pem_private_key(open(sys.argv[2], "rb").read(), password=None).public_key()
    claims = jwt.decode(wrapper["signatureInfo"]["token"], key, algorithms=["ES256"], audience="advanced-commerce-api")
    request_json = json.loads(base64.b64decode(claims["request"], validate=True))
    request = _get_cattrs_converter(AdvancedCommerceSubscriptionModifyInAppRequest).structure(
        request_json, AdvancedCommerceSubscriptionModifyInAppRequest)
    item = request.changeItems[0]
    print(json.dumps({
        "others": [answer.message is None, answer.alternateProduct is None, answer.promotionalOffer is None],
        "messageIdentifier": str(info.messageIdentifier),
        "bid": claims["bid"], "iss": claims["iss"],
        "operation": request.operation, "version": request.version, "transactionId": request.transactionId,
        "retainBillingCycle": request.retainBillingCycle, "changeItems": len(request.changeItems),
        "requestReferenceId": str(request.requestInfo.requestReferenceId),
        "SKU": item.SKU, "currentSKU": item.currentSKU, "displayName": item.displayName, "description": item.description,
        "price": item.price, "reason": item.reason.value, "effective": item.effective.value,
        "offer": [item.offer.period.value, item.offer.periodCount, item.offer.price, item.offer.reason.value],
    }, sort_keys=True))
    """#

    @Test func appleLibraryDecodesWhatServeAnswersAnAdvancedCommerceCustomer() async throws {
        let python = Repository.url(".build/tools/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            Issue.record("\(python.path) is missing: run `bash .ci/setup --test` (it installs app-store-server-library into .build/tools)")
            return
        }
        let chain = try AppleStyleSigningChain()
        let key = ES256PrivateKey.generate()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apple-library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let messageIdentifier = "00000000-0000-5000-8000-000000000005"
        let change = AdvancedCommerceChange(
            sku: "focus.annual", currentSku: "focus.monthly", displayName: "Focus Annual", description: "Focus for a whole year",
            price: 59990, reason: "UPGRADE", effective: "NEXT_BILL_CYCLE", retainBillingCycle: false,
            offer: AdvancedCommerceOffer(period: "P1M", periodCount: 3, price: 29990, reason: "RETENTION"))
        let snapshot = try RuntimeSnapshot(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production, localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/annual", version: "0123456789abcdef", match: SnapshotMatch(products: ["com.example.generic"]),
                         response: SnapshotResponse(kind: .advancedCommerce, message: "annual", messageIdentifiers: ["en-US": messageIdentifier],
                                                    advancedCommerce: change)),
        ]).sealed()
        let snapshotFile = folder.appendingPathComponent("snapshot.json")
        try snapshot.encoded().write(to: snapshotFile)
        let service = RealtimeService(configuration: RealtimeService.Configuration(
            endpoints: [RealtimeEndpoint(path: "/apple/production", environment: .production, source: FileSnapshotSource(path: snapshotFile.path))],
            trustedRoots: [chain.root], maxAge: 300, signingKey: OfferSigningKey(keyId: "KEY1234567", issuerId: "issuer", privateKey: key),
            pollInterval: 3600, clock: SystemClock()), log: RequestLog(sink: { _ in }))
        service.startPolling()
        defer { service.stopPolling() }

        let request = DecodedRealtimeRequestBody(originalTransactionId: "2000000000000077", appAppleId: 1_234_567_890, productId: "com.example.generic",
                                                 userLocale: "en-US", requestIdentifier: UUID().uuidString.lowercased(), environment: "Production",
                                                 signedDate: Int64(Date().timeIntervalSince1970 * 1000))
        let signed = try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(JWSHeader(alg: "ES256", x5c: chain.x5c))),
                                  payloadJSON: Array(try CanonicalJSON.encode(request)), key: chain.leafKey)
        let response = service.handle(HTTPServerRequest(method: "POST", target: "/apple/production",
                                                        headers: [(name: "Content-Type", value: "application/json")],
                                                        body: try JSONSerialization.data(withJSONObject: ["signedPayload": signed])))
        #expect(response.status == 200)
        let bodyFile = folder.appendingPathComponent("body.json")
        try response.body.write(to: bodyFile)
        let keyFile = folder.appendingPathComponent("key.pem")
        try Data(key.pkcs8PEM.utf8).write(to: keyFile)

        let output = try await onOwnThread { try Self.run(python, ["-c", Self.decoder, bodyFile.path, keyFile.path]) }
        let decoded = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(String(decoding: output, as: UTF8.self))")
        #expect(decoded["others"] as? [Bool] == [true, true, true])
        #expect(decoded["messageIdentifier"] as? String == messageIdentifier)
        #expect(decoded["bid"] as? String == "com.example.app" && decoded["iss"] as? String == "issuer")
        #expect(decoded["operation"] as? String == "MODIFY_SUBSCRIPTION" && decoded["version"] as? String == "1")
        #expect(decoded["transactionId"] as? String == "2000000000000077")
        #expect(decoded["retainBillingCycle"] as? Bool == false)
        #expect(decoded["changeItems"] as? Int == 1)
        #expect(UUID(uuidString: decoded["requestReferenceId"] as? String ?? "") != nil)
        #expect(decoded["SKU"] as? String == "focus.annual" && decoded["currentSKU"] as? String == "focus.monthly")
        #expect(decoded["displayName"] as? String == "Focus Annual" && decoded["description"] as? String == "Focus for a whole year")
        #expect(decoded["price"] as? Int == 59990)
        #expect(decoded["reason"] as? String == "UPGRADE" && decoded["effective"] as? String == "NEXT_BILL_CYCLE")
        #expect(decoded["offer"] as? [AnyHashable] == ["P1M", 3, 29990, "RETENTION"])
    }

    /// Runs `executable`, returning its standard output; a non-zero exit throws with its standard error.
    static func run(_ executable: URL, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw DecodeFailed(description: "python exited \(process.terminationStatus): \(errorText)")
        }
        return data
    }

    struct DecodeFailed: Error, CustomStringConvertible { var description: String }
}
