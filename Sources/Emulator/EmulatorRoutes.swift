import Crypto
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Synchronization

/// What a route produced: the answer, whether state changed (to persist), and a note for the log.
struct RouteResult {
    var response: HTTPResponse
    var mutated = false
    var note: String?
    /// A performance test the route accepted, for `process` to launch outside the lock.
    var performanceTest: PerformanceTestJob?
}

/// Error codes the emulator uses where Apple documents none (a malformed identifier or body).
enum EmulatorErrorCode {
    static let invalidRequest = 4000000
}

extension Emulator {
    /// Answers an authenticated API request: rate limit, then the route. Runs under the core's lock.
    func route(_ request: ParsedRequest, app: String, environment: Environment, core: inout Core, now: Double) -> RouteResult {
        guard request.isAPI else { return RouteResult(response: HTTPResponse(status: 404), note: "not an API path") }
        if request.isNotificationHistory { return notificationHistoryRoute(request, app: app, environment: environment, core: &core, now: now) }
        if let id = request.subscriptionStatusId {
            return subscriptionStatusRoute(id, request, app: app, environment: environment, core: &core, now: now)
        }

        let endpointClass: EndpointClass = request.method == "PUT" && request.segments.first == "default" ? .configureDefault : .other
        if let perHour = configuration.rateLimit.perHour(endpointClass, in: environment), perHour > 0 {
            var bucket = core[app, environment].buckets[endpointClass]
                ?? TokenBucket(capacity: Double(perHour), rate: Double(perHour) / 3600, now: now)
            let wait = bucket.take(now: now)
            core[app, environment].buckets[endpointClass] = bucket
            if let wait {
                let retryAfter = Int64(((now + wait) * 1000).rounded(.up))
                var response = Responses.error(429, AppleErrorCode.rateLimitExceeded, "Rate limit exceeded.")
                response.headers.append((name: "Retry-After", value: String(retryAfter)))
                return RouteResult(response: response, note: "rate limited")
            }
        }

        let sandboxTestPassed = core[app, .sandbox].state.performanceTestPassed
        // In place: a copy of the state would make every upload copy all stored messages.
        var result = apiRoute(request, environment: environment,
                              store: &core.apps[app, default: [:]][environment, default: Store()].state,
                              sandboxTestPassed: sandboxTestPassed)
        result.performanceTest?.app = app
        return result
    }

    /// What the token check decided: the app (bundle id) the request is for, or why it is refused.
    enum Authentication {
        case accepted(bundleId: String)
        case refused(String)
    }

    /// Checks the bearer token as Apple does.
    func authenticate(_ authorization: String?, now: Double) -> Authentication {
        switch authenticationCheck(authorization, now: now) {
        case .success(let bundleId): .accepted(bundleId: bundleId)
        case .failure(let refusal): .refused(refusal.reason)
        }
    }

    struct Refusal: Error {
        var reason: String
    }

    private func authenticationCheck(_ authorization: String?, now: Double) -> Result<String, Refusal> {
        func failure(_ reason: String) -> Result<String, Refusal> { .failure(Refusal(reason: reason)) }
        if let reason = authenticationFailure(authorization, now: now) { return failure(reason) }
        guard let bid = Self.bundleId(of: authorization) else { return failure("bid missing") }
        guard configuration.accepts(bundleId: bid) else {
            let known = configuration.knownBundleIds
            return failure("the token's bundle id (bid) \(bid) is not an app of this emulator, which serves "
                           + known.joined(separator: ", ") + "; give the emulator --bundle-id "
                           + (known + [bid]).joined(separator: ",") + ", or none so that it keeps every app apart")
        }
        return .success(bid)
    }

    /// The `bid` claim of a token that was already verified.
    private static func bundleId(of authorization: String?) -> String? {
        struct Claims: Decodable { var bid: String? }
        guard let authorization, authorization.hasPrefix("Bearer "),
              let jws = try? JWS.decode(String(authorization.dropFirst("Bearer ".count))),
              let claims = try? JSONDecoder().decode(Claims.self, from: Data(jws.payloadJSON)),
              let bid = claims.bid, !bid.isEmpty else { return nil }
        return bid
    }

    /// Checks the bearer token as Apple does, the app aside; returns why it is refused, or nil.
    func authenticationFailure(_ authorization: String?, now: Double) -> String? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return "no bearer token" }
        let token = String(authorization.dropFirst("Bearer ".count))
        guard let jws = try? JWS.decode(token) else { return "malformed token" }
        guard jws.header.alg == "ES256" else { return "alg is not ES256" }
        guard jws.header.typ == nil || jws.header.typ == "JWT" else { return "typ is not JWT" }
        if let keyId = configuration.keyId, jws.header.kid != keyId { return "kid does not match the emulator's key id" }
        guard jws.verify(with: configuration.publicKey) else { return "signature does not verify with the configured key" }

        struct Claims: Decodable {
            var iss: String?
            var iat: Double?
            var exp: Double?
            var aud: String?
            var bid: String?
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(jws.payloadJSON)) else { return "claims are not JSON" }
        guard let exp = claims.exp else { return "exp missing" }
        guard exp + configuration.clockSkew > now else { return "token expired" }
        // Apple accepts tokens without `iat` (its own Python library sends none): then `exp` alone bounds the lifetime.
        if let iat = claims.iat {
            guard exp - iat <= 3600 else { return "token lives longer than 60 minutes (exp - iat)" }
            guard iat <= now + configuration.clockSkew else { return "token issued in the future (iat; is a clock off?)" }
        } else {
            guard exp - now <= 3600 + configuration.clockSkew else { return "token without iat expires more than 60 minutes from now" }
        }
        guard claims.aud == "appstoreconnect-v1" else { return "aud is not appstoreconnect-v1" }
        guard let iss = claims.iss, !iss.isEmpty else { return "iss missing" }
        if let issuerId = configuration.issuerId, iss != issuerId { return "iss does not match the emulator's issuer id" }
        guard let bid = claims.bid, !bid.isEmpty else { return "bid missing" }
        return nil
    }

    private func apiRoute(_ request: ParsedRequest, environment: Environment, store: inout EmulatorState,
                          sandboxTestPassed: Bool) -> RouteResult {
        let segments = request.segments
        if !configuration.apiAccess && (segments.first == "realtime" || segments.first == "performanceTest") {
            return RouteResult(response: HTTPResponse(status: 404), note: "no API access (emulated)")
        }
        let routed: RouteResult?
        switch segments.first {
        case "message": routed = messageRoute(request, environment: environment, store: &store)
        case "image": routed = imageRoute(request, environment: environment, store: &store)
        case "default" where segments.count == 3: routed = defaultRoute(request, productId: segments[1], locale: segments[2], store: &store)
        case "realtime": routed = realtimeRoute(request, environment: environment, store: &store, sandboxTestPassed: sandboxTestPassed)
        case "performanceTest": routed = performanceTestRoute(request, environment: environment, store: &store)
        default: routed = nil
        }
        if let routed { return routed }
        let known = ["message", "image", "default", "realtime", "performanceTest"].contains(segments.first ?? "")
        return RouteResult(response: HTTPResponse(status: known ? 405 : 404), note: known ? "method not allowed" : "no such route")
    }

    /// `/message/list`, `/message/{id}`; nil for a method the resource does not take.
    private func messageRoute(_ request: ParsedRequest, environment: Environment, store: inout EmulatorState) -> RouteResult? {
        let segments = request.segments
        switch (request.method, segments.count) {
        case ("GET", 2) where segments[1] == "list":
            let items = store.messages.sorted { $0.key < $1.key }
                .map { GetMessageListResponseItem(messageIdentifier: $0.key, messageState: $0.value.state) }
            return RouteResult(response: Responses.json(GetMessageListResponse(messageIdentifiers: items)))
        case ("PUT", 2):
            return uploadMessage(segments[1], request.body, environment: environment, store: &store)
        case ("DELETE", 2):
            guard Validation.isUUID(segments[1]) else { return Responses.invalidIdentifier("message") }
            guard store.messages.removeValue(forKey: segments[1]) != nil else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.messageNotFound, "Message not found."))
            }
            return RouteResult(response: Responses.ok, mutated: true)
        default:
            return nil
        }
    }

    /// `/image/list`, `/image/{id}`; nil for a method the resource does not take.
    private func imageRoute(_ request: ParsedRequest, environment: Environment, store: inout EmulatorState) -> RouteResult? {
        let segments = request.segments
        switch (request.method, segments.count) {
        case ("GET", 2) where segments[1] == "list":
            let items = store.images.sorted { $0.key < $1.key }
                .map { GetImageListResponseItem(imageIdentifier: $0.key, imageState: $0.value.state, imageSize: $0.value.size) }
            return RouteResult(response: Responses.json(GetImageListResponse(imageIdentifiers: items)))
        case ("PUT", 2):
            return uploadImage(segments[1], size: request.query["imageSize"], request.body, environment: environment, store: &store)
        case ("DELETE", 2):
            let id = segments[1]
            guard Validation.isUUID(id) else { return Responses.invalidIdentifier("image") }
            guard store.images[id] != nil else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.imageNotFound, "Image not found."))
            }
            guard !store.isImageInUse(id) else {
                return RouteResult(response: Responses.error(403, AppleErrorCode.imageInUse, "The image is in use by a message."))
            }
            store.images[id] = nil
            return RouteResult(response: Responses.ok, mutated: true)
        default:
            return nil
        }
    }

    /// `/realtime/url`; nil for a method or path the resource does not take.
    private func realtimeRoute(_ request: ParsedRequest, environment: Environment, store: inout EmulatorState,
                               sandboxTestPassed: Bool) -> RouteResult? {
        let segments = request.segments
        guard segments.count == 2, segments[1] == "url" else { return nil }
        switch request.method {
        case "PUT":
            guard let body = try? JSONDecoder().decode(RealtimeURLRequest.self, from: request.body) else {
                return RouteResult(response: Responses.error(400, AppleErrorCode.invalidRealtimeURL, "Invalid realtime URL."))
            }
            let url = body.realtimeURL
            guard url.lowercased().hasPrefix("https://"), url.count > "https://".count,
                  url.count <= RetentionLimits.realtimeURLLength, URL(string: url)?.host != nil else {
                return RouteResult(response: Responses.error(400, AppleErrorCode.invalidRealtimeURL, "Invalid realtime URL."))
            }
            if environment == .production && !sandboxTestPassed {
                return RouteResult(response: Responses.error(403, AppleErrorCode.realtimeURLNeedsPerformanceTest,
                                                             "A passing sandbox performance test is required before configuring the production realtime URL."))
            }
            store.realtimeURL = url
            return RouteResult(response: Responses.ok, mutated: true)
        case "GET":
            guard let url = store.realtimeURL else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.realtimeURLNotFound, "Realtime URL not found."))
            }
            return RouteResult(response: Responses.json(RealtimeUrlResponse(realtimeURL: url)))
        case "DELETE":
            let had = store.realtimeURL != nil
            store.realtimeURL = nil
            return RouteResult(response: Responses.ok, mutated: had)
        default:
            return nil
        }
    }

    /// `POST /performanceTest`, `GET /performanceTest/result/{id}`: sandbox only.
    private func performanceTestRoute(_ request: ParsedRequest, environment: Environment, store: inout EmulatorState) -> RouteResult? {
        let segments = request.segments
        switch (request.method, segments.count) {
        case ("POST", 1):
            guard environment == .sandbox else { return RouteResult(response: HTTPResponse(status: 404), note: "sandbox only") }
            return startPerformanceTest(request.body, store: &store)
        case ("GET", 3) where segments[1] == "result":
            guard environment == .sandbox else { return RouteResult(response: HTTPResponse(status: 404), note: "sandbox only") }
            let id = segments[2]
            guard Validation.isUUID(id) else {
                return RouteResult(response: Responses.error(400, AppleErrorCode.invalidPerformanceTestRequestId, "Invalid request identifier."))
            }
            guard store.performanceTests[id] != nil, let result = store.performanceTestResults[id] else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.performanceTestNotFound, "Performance test not found."))
            }
            return RouteResult(response: Responses.json(result))
        default:
            return nil
        }
    }

    /// Apple's checks on `POST /performanceTest`, in the order its documentation lists them; a run
    /// that may start is recorded as PENDING and handed to `process` to launch.
    private func startPerformanceTest(_ bodyData: Data, store: inout EmulatorState) -> RouteResult {
        guard let body = try? JSONDecoder().decode(PerformanceTestRequest.self, from: bodyData), !body.originalTransactionId.isEmpty else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidPerformanceTestRequest, "Invalid request."))
        }
        guard !store.performanceTests.values.contains(.pending) else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.performanceTestAlreadyRunning,
                                                         "A performance test is already in progress."))
        }
        guard let transaction = store.testTransactions[body.originalTransactionId] else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidTransactionId, "Invalid transaction id."),
                               note: "unknown sandbox transaction; register it with POST /emulator/transactions")
        }
        if transaction.appTransaction {
            return RouteResult(response: Responses.error(400, AppleErrorCode.appTransactionIdNotSupported, "App transaction id not supported."))
        }
        if transaction.familyShared {
            return RouteResult(response: Responses.error(400, AppleErrorCode.familyTransactionNotSupported,
                                                         "Family-shared transactions are not supported."))
        }
        if !transaction.original {
            return RouteResult(response: Responses.error(400, AppleErrorCode.transactionIdNotOriginal, "The transaction id is not an original transaction id."))
        }
        guard let target = store.realtimeURL, let url = URL(string: target) else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidPerformanceTestRequest, "Invalid request."),
                               note: "no sandbox realtime URL is configured")
        }
        guard let signer = configuration.realtimeSigner else {
            return RouteResult(response: Responses.error(500, AppleErrorCode.generalInternal, "An unknown error occurred."),
                               note: "the emulator has no signer for realtime requests")
        }
        let settings = configuration.performanceTest
        let requestId = UUID().uuidString.lowercased()
        store.performanceTests[requestId] = .pending
        store.performanceTestResults[requestId] = PerformanceTestTally(totalRequests: settings.totalRequests)
            .response(settings: settings, target: target)
        let job = PerformanceTestJob(requestId: requestId, target: url, transaction: transaction, settings: settings, signer: signer)
        return RouteResult(response: Responses.json(PerformanceTestResponse(config: settings.config, requestId: requestId)),
                           mutated: true, performanceTest: job)
    }

    private func uploadMessage(_ id: String, _ bodyData: Data, environment: Environment, store: inout EmulatorState) -> RouteResult {
        guard Validation.isUUID(id) else { return Responses.invalidIdentifier("message") }
        guard store.messages[id] == nil else {
            return RouteResult(response: Responses.error(409, AppleErrorCode.messageAlreadyExists, "A message with this identifier already exists."))
        }
        guard let body = try? JSONDecoder().decode(UploadMessageRequestBody.self, from: bodyData) else {
            return RouteResult(response: Responses.error(400, EmulatorErrorCode.invalidRequest, "Invalid request body."))
        }
        if let refusal = Validation.messageRefusal(body, images: store.images) {
            return RouteResult(response: refusal)
        }
        guard store.messages.count < RetentionLimits.messages else {
            return RouteResult(response: Responses.error(403, AppleErrorCode.maximumMessagesReached, "The maximum number of messages has been reached."))
        }
        store.messages[id] = EmulatedMessage(state: initialReviewState(environment), body: body)
        return RouteResult(response: Responses.ok, mutated: true)
    }

    private func uploadImage(_ id: String, size sizeParameter: String?, _ bytes: Data, environment: Environment,
                             store: inout EmulatorState) -> RouteResult {
        guard Validation.isUUID(id) else { return Responses.invalidIdentifier("image") }
        let size = ImageSize(rawValue: sizeParameter ?? ImageSize.fullSize.rawValue)
        guard size == .fullSize || size == .bulletPoint else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidImageSize, "Invalid image size."))
        }
        guard store.images[id] == nil else {
            return RouteResult(response: Responses.error(409, AppleErrorCode.imageAlreadyExists, "An image with this identifier already exists."))
        }
        guard bytes.count <= EmulatorConfiguration.maxBodySize else {
            let why = "the emulator reads at most \(EmulatorConfiguration.maxBodySize / 1_048_576) MiB per request (Apple documents no limit; the largest valid PNG, 3840 × 2160 16-bit RGB stored uncompressed, is about 50 MB)"
            return RouteResult(response: Responses.error(413, AppleErrorCode.invalidImage, "Invalid image: \(bytes.count) bytes is larger than any valid image; \(why)."),
                               note: "image body too large")
        }
        let png = [UInt8](bytes)
        guard let info = try? PNGInfo.parse(png) else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidImage, "Invalid image: not a PNG."), note: "not a PNG")
        }
        if let problem = Validation.imageProblem(info, size: size) {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidImage, "Invalid image: \(problem)."), note: problem)
        }
        guard store.images.count < RetentionLimits.images else {
            return RouteResult(response: Responses.error(403, AppleErrorCode.maximumImagesReached, "The maximum number of images has been reached."))
        }
        store.images[id] = EmulatedImage(state: ImageState(rawValue: initialReviewState(environment).rawValue), size: size,
                                         width: info.width, height: info.height, byteCount: png.count, sha256: Digest.sha256Hex(png))
        return RouteResult(response: Responses.ok, mutated: true)
    }

    private func defaultRoute(_ request: ParsedRequest, productId: String, locale: String, store: inout EmulatorState) -> RouteResult {
        guard request.method == "PUT" || request.method == "GET" || request.method == "DELETE" else {
            return RouteResult(response: HTTPResponse(status: 405), note: "method not allowed")
        }
        if !Validation.isProductId(productId) || configuration.productIds.map({ !$0.contains(productId) }) == true {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidProductId, "Invalid product identifier."))
        }
        guard Validation.isLocale(locale) else {
            return RouteResult(response: Responses.error(400, AppleErrorCode.invalidLocale, "Invalid locale."))
        }
        let key = DefaultKey(productId: productId, locale: locale)
        switch request.method {
        case "GET":
            guard let id = store.defaults[key] else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.defaultNotFound, "Default message not found."))
            }
            return RouteResult(response: Responses.json(DefaultConfigurationResponse(messageIdentifier: id)))
        case "DELETE":
            let had = store.defaults.removeValue(forKey: key) != nil
            return RouteResult(response: Responses.ok, mutated: had)
        default:
            guard let body = try? JSONDecoder().decode(DefaultConfigurationRequest.self, from: request.body),
                  Validation.isUUID(body.messageIdentifier) else {
                return RouteResult(response: Responses.error(400, EmulatorErrorCode.invalidRequest, "Invalid request body."))
            }
            guard let message = store.messages[body.messageIdentifier] else {
                return RouteResult(response: Responses.error(404, AppleErrorCode.messageNotFound, "Message not found."))
            }
            guard message.state == .approved else {
                return RouteResult(response: Responses.error(403, AppleErrorCode.messageNotApproved, "The message is not approved."))
            }
            for imageId in message.body.referencedImageIdentifiers where store.images[imageId]?.state != .approved {
                return RouteResult(response: Responses.error(403, AppleErrorCode.imageNotApproved, "An image the message uses is not approved."))
            }
            store.defaults[key] = body.messageIdentifier
            return RouteResult(response: Responses.ok, mutated: true)
        }
    }

    private func initialReviewState(_ environment: Environment) -> MessageState {
        environment == .sandbox || configuration.productionReview == .auto ? .approved : .pending
    }
}

enum Responses {
    static let ok = HTTPResponse(status: 200)

    static func error(_ status: Int, _ code: Int, _ message: String) -> HTTPResponse {
        json(ErrorPayload(errorCode: code, errorMessage: message), status: status)
    }

    static func invalidIdentifier(_ what: String) -> RouteResult {
        RouteResult(response: error(400, EmulatorErrorCode.invalidRequest, "Invalid \(what) identifier."), note: "malformed UUID")
    }

    static func json<T: Encodable>(_ value: T, status: Int = 200, pretty: Bool = false) -> HTTPResponse {
        let data = (try? (pretty ? CanonicalJSON.encodePretty(value) : CanonicalJSON.encode(value))) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: data)
    }
}

/// Apple's checks on what is sent, as the emulator applies them.
enum Validation {
    static func isUUID(_ text: String) -> Bool { UUIDText.isUUID(text) }

    /// App Store Connect's hyphenated locale shape (`en-US`, `zh-Hans`), as the manifests check it.
    static func isLocale(_ text: String) -> Bool { AppStoreLocaleCodes.isWellFormed(text) }

    static func isProductId(_ text: String) -> Bool {
        !text.isEmpty && text.count <= RetentionLimits.productIdLength && RetentionLimits.hasProductIdCharacters(text)
    }

    static func messageRefusal(_ body: UploadMessageRequestBody, images: [String: EmulatedImage]) -> HTTPResponse? {
        func tooLong(_ text: String, _ limit: Int) -> Bool { RetentionLimits.length(of: text) > limit }
        if tooLong(body.header, RetentionLimits.headerLength) {
            return Responses.error(400, AppleErrorCode.headerTooLong, "The header exceeds the maximum length.")
        }
        if tooLong(body.body, RetentionLimits.bodyLength) {
            return Responses.error(400, AppleErrorCode.bodyTooLong, "The body exceeds the maximum length.")
        }
        if let image = body.image {
            if tooLong(image.altText, RetentionLimits.altTextLength) {
                return Responses.error(400, AppleErrorCode.altTextTooLong, "The alt text exceeds the maximum length.")
            }
            if !isUUID(image.imageIdentifier) {
                return Responses.error(400, EmulatorErrorCode.invalidRequest, "Invalid image identifier.")
            }
            if let stored = images[image.imageIdentifier], stored.size != .fullSize {
                return Responses.error(400, AppleErrorCode.invalidImageSize, "The message image must be a FULL_SIZE image.")
            }
        }
        let bullets = body.bulletPoints ?? []
        if bullets.count > RetentionLimits.bulletPoints {
            return Responses.error(400, AppleErrorCode.tooManyBulletPoints, "Too many bullet points.")
        }
        for bullet in bullets {
            if tooLong(bullet.text, RetentionLimits.bulletPointTextLength) {
                return Responses.error(400, AppleErrorCode.bulletPointTextTooLong, "A bullet point's text exceeds the maximum length.")
            }
            if tooLong(bullet.altText, RetentionLimits.altTextLength) {
                return Responses.error(400, AppleErrorCode.altTextTooLong, "The alt text exceeds the maximum length.")
            }
            if !isUUID(bullet.imageIdentifier) {
                return Responses.error(400, EmulatorErrorCode.invalidRequest, "Invalid image identifier.")
            }
            if let stored = images[bullet.imageIdentifier], stored.size != .bulletPoint {
                return Responses.error(400, AppleErrorCode.invalidImageSize, "A bullet point image must be a BULLET_POINT image.")
            }
        }
        if let position = body.headerPosition, position != .aboveBody && position != .aboveImage {
            return Responses.error(400, EmulatorErrorCode.invalidRequest, "Invalid header position.")
        }
        if body.headerPosition == .aboveImage && body.image == nil {
            return Responses.error(400, AppleErrorCode.headerPositionNeedsImage, "ABOVE_IMAGE requires an image.")
        }
        return nil
    }

    /// Why a PNG is refused for `size`, or nil: the same facts the manifests are validated against.
    static func imageProblem(_ info: PNGInfo, size: ImageSize) -> String? { info.appleProblem(for: size) }
}
