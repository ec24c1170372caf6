import Foundation
import HTTPCore
import RetentionMessagingModels
import Synchronization

/// One admin call: the request, its path below `/emulator/`, the environment and the app it names.
struct AdminCall {
    var request: ParsedRequest
    var segments: [String]
    var environment: Environment
    /// The app `?bundleId=` names; nil: the first app.
    var app: String?
}

/// One admin route: its method, its path below `/emulator/` (`*` matches any one segment) and what
/// it answers.
struct AdminRoute: Sendable {
    var method: String
    var path: [String]
    var answer: @Sendable (Emulator, AdminCall) -> HTTPResponse

    init(_ method: String, _ path: [String], answer: @escaping @Sendable (Emulator, AdminCall) -> HTTPResponse) {
        self.method = method
        self.path = path
        self.answer = answer
    }

    func matches(_ method: String, _ segments: [String]) -> Bool {
        method == self.method && segments.count == path.count && zip(path, segments).allSatisfy { $0 == "*" || $0 == $1 }
    }
}

extension Emulator {
    /// The admin routes `retention-sync emulator --help` describes.
    static let adminRoutes: [AdminRoute] = [
        AdminRoute("GET", ["state"]) { emulator, call in
            Responses.json(emulator.state(of: call.environment, bundleId: call.app), pretty: true)
        },
        AdminRoute("GET", ["apps"]) { emulator, _ in
            Responses.json(["bundleIds": emulator.bundleIds], pretty: true)
        },
        AdminRoute("POST", ["approve-all"]) { emulator, call in
            // What was approved, not the whole state (GET /emulator/state shows that).
            let approved = emulator.approveAllPending(in: call.environment, bundleId: call.app)
            return Responses.json(["approvedMessages": approved.messages, "approvedImages": approved.images], pretty: true)
        },
        AdminRoute("POST", ["messages", "*", "approve"]) { emulator, call in
            review(call, as: "APPROVED") { id, environment, app throws(EmulatorError) in try emulator.approveMessage(id, in: environment, bundleId: app) }
        },
        AdminRoute("POST", ["messages", "*", "reject"]) { emulator, call in
            review(call, as: "REJECTED") { id, environment, app throws(EmulatorError) in try emulator.rejectMessage(id, in: environment, bundleId: app) }
        },
        AdminRoute("POST", ["images", "*", "approve"]) { emulator, call in
            review(call, as: "APPROVED") { id, environment, app throws(EmulatorError) in try emulator.approveImage(id, in: environment, bundleId: app) }
        },
        AdminRoute("POST", ["images", "*", "reject"]) { emulator, call in
            review(call, as: "REJECTED") { id, environment, app throws(EmulatorError) in try emulator.rejectImage(id, in: environment, bundleId: app) }
        },
        AdminRoute("POST", ["seed"]) { emulator, call in emulator.adminSeed(call) },
        AdminRoute("GET", ["test-root.pem"]) { emulator, _ in
            guard let pem = emulator.configuration.realtimeRootCertificatePEM else {
                return Responses.json(["error": "this emulator has no test chain: it was started without a realtime signer"], status: 404)
            }
            return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/x-pem-file")], body: Data(pem.utf8))
        },
        AdminRoute("POST", ["transactions"]) { emulator, call in emulator.adminAddTransaction(call) },
        AdminRoute("GET", ["transactions"]) { emulator, call in
            Responses.json(emulator.state(of: .sandbox, bundleId: call.app).testTransactions.values.sorted { $0.originalTransactionId < $1.originalTransactionId },
                           pretty: true)
        },
        AdminRoute("PUT", ["realtime-url"]) { emulator, call in emulator.adminSetRealtimeURL(call) },
    ]

    /// The app an admin call names with `?bundleId=` (nil: the first app), or the answer refusing an
    /// app this emulator does not serve.
    func adminApp(_ request: ParsedRequest) -> Result<String?, AdminRefusal> {
        guard let requested = request.query["bundleId"], !requested.isEmpty else { return .success(nil) }
        guard configuration.accepts(bundleId: requested) else {
            return .failure(AdminRefusal(response: Responses.json(
                ["error": "no app \(requested) in this emulator: it serves \(configuration.knownBundleIds.joined(separator: ", ")) (--bundle-id)"],
                status: 404)))
        }
        return .success(requested)
    }

    struct AdminRefusal: Error {
        var response: HTTPResponse
    }

    func admin(_ request: ParsedRequest, environment: Environment) -> HTTPResponse {
        let segments = Array(request.segments.dropFirst())
        let line = "\(environment.rawValue) admin \(request.method) \(request.rawPath)"
        let app: String?
        switch adminApp(request) {
        case .success(let named): app = named
        case .failure(let refusal):
            log("\(line) → \(refusal.response.status)")
            return refusal.response
        }
        var response: HTTPResponse
        if let route = Self.adminRoutes.first(where: { $0.matches(request.method, segments) }) {
            response = route.answer(self, AdminCall(request: request, segments: segments, environment: environment, app: app))
        } else {
            response = Responses.json(["error": "unknown admin route; see 'retention-sync emulator --help'"], status: 404)
        }
        let named = app ?? core.withLock { $0.primary }
        if !named.isEmpty { response.headers.append((name: Self.bundleIdHeader, value: named)) }
        log("\(line) → \(response.status)")
        return response
    }

    /// Approves or rejects the message or image the path names.
    private static func review(_ call: AdminCall, as state: String,
                               _ decide: (String, Environment, String?) throws(EmulatorError) -> Void) -> HTTPResponse {
        let id = call.segments[1]
        do {
            try decide(id, call.environment, call.app)
            return Responses.json(["identifier": id, "state": state])
        } catch {
            return Responses.json(["error": error.description], status: 404)
        }
    }

    private func adminSeed(_ call: AdminCall) -> HTTPResponse {
        guard let seed = try? JSONDecoder().decode(EmulatorSeed.self, from: call.request.body) else {
            return Responses.json(["error": #"expected {"messages": [{"identifier": UUID, "state": "APPROVED"}], "images": [{"identifier": UUID, "state": "PENDING", "size": "FULL_SIZE"}], "defaults": [{"productId": "…", "locale": "en-US", "messageIdentifier": UUID}], "realtimeURL": "https://…"}"#],
                                  status: 400)
        }
        do {
            try self.seed(seed, in: call.environment, bundleId: call.app)
            return Responses.json(seed.counts)
        } catch {
            return Responses.json(["error": error.description], status: 400)
        }
    }

    private func adminAddTransaction(_ call: AdminCall) -> HTTPResponse {
        guard let transaction = try? JSONDecoder().decode(SandboxTransaction.self, from: call.request.body),
              !transaction.originalTransactionId.isEmpty, !transaction.productId.isEmpty else {
            return Responses.json(["error": #"expected {"originalTransactionId": "…", "productId": "…", "locale": "en-US", "original": true, "familyShared": false}"#],
                                  status: 400)
        }
        registerTestTransaction(transaction, bundleId: call.app)
        return Responses.json(transaction)
    }

    /// Apple's PUT /realtime/url takes https:// only; this admin route also takes http:// on loopback (tests, demo).
    private func adminSetRealtimeURL(_ call: AdminCall) -> HTTPResponse {
        guard let body = try? JSONDecoder().decode(RealtimeURLRequest.self, from: call.request.body),
              let url = URL(string: body.realtimeURL) else {
            return Responses.json(["error": #"expected {"realtimeURL": "http://127.0.0.1:PORT/…"}"#], status: 400)
        }
        if let problem = PerformanceTestRunner.targetProblem(url) {
            return Responses.json(["error": problem], status: 400)
        }
        core.withLock { core in core[core.app(call.app), call.environment].state.realtimeURL = body.realtimeURL }
        persist()
        return Responses.json(RealtimeUrlResponse(realtimeURL: body.realtimeURL))
    }
}
