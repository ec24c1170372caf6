import Basics
import Foundation
import HTTPCore
import RetentionMessagingModels
import Synchronization

extension Emulator {
    /// The admin routes of simulated customers, or nil for any other admin route:
    /// `POST /emulator/customers` (settings in, summary out), `POST /emulator/clock`
    /// (`{"advanceSeconds": N}` or `{"to": ms}`; delivers what came due) and `GET /emulator/clock`.
    func customersAdmin(_ request: ParsedRequest, environment: Environment) async -> HTTPResponse? {
        let segments = Array(request.segments.dropFirst())
        let response: HTTPResponse
        switch (request.method, segments) {
        case ("POST", ["customers"]):
            response = await startCustomers(request, environment: environment)
        case ("POST", ["clock"]):
            struct Body: Decodable {
                var advanceSeconds: Double?
                var to: Int64?
            }
            guard let body = try? JSONDecoder().decode(Body.self, from: request.body), (body.advanceSeconds == nil) != (body.to == nil),
                  (body.advanceSeconds ?? 0) >= 0 else {
                response = Responses.json(["error": #"expected {"advanceSeconds": N} or {"to": <ms since 1970>}"#], status: 400)
                break
            }
            let delivered = if let seconds = body.advanceSeconds {
                await advanceClock(by: seconds)
            } else {
                await advanceClock(to: UTCTime(milliseconds: body.to ?? 0))
            }
            response = Responses.json(ClockAnswer(emulator: self, delivered: delivered))
        case ("GET", ["clock"]):
            response = Responses.json(ClockAnswer(emulator: self, delivered: nil))
        default:
            return nil
        }
        log("\(environment.rawValue) admin \(request.method) \(request.rawPath) → \(response.status)")
        return response
    }

    private func startCustomers(_ request: ParsedRequest, environment: Environment) async -> HTTPResponse {
        let body = request.body
        let settings: CustomerSimulationSettings
        do {
            settings = try JSONDecoder().decode(CustomerSimulationSettings.self, from: body)
        } catch {
            return Responses.json(["error": "expected customer simulation settings (see docs/emulator.md, \"Simulated customers\"): \(error)"],
                                  status: 400)
        }
        var chosen = settings
        // Without an explicit environment, the customers belong to the environment the route was called in.
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        if object?["environment"] == nil { chosen.environment = environment }
        // Without a bundleId, they are customers of the app `?bundleId=` names, else of the first app.
        if chosen.bundleId == nil, let named = request.query["bundleId"], !named.isEmpty { chosen.bundleId = named }
        if let bundleId = chosen.bundleId, !configuration.accepts(bundleId: bundleId) {
            return Responses.json(["error": "no app \(bundleId) in this emulator: it serves \(configuration.knownBundleIds.joined(separator: ", ")) (--bundle-id)"],
                                  status: 400)
        }
        if chosen.bundleId == nil {
            let first = core.withLock { $0.primary }
            if !first.isEmpty { chosen.bundleId = first }
        }
        do {
            let simulation = try CustomerSimulation(settings: chosen, emulator: self)
            if let problem = simulation.clockProblem { return Responses.json(["error": problem], status: 409) }
            return Responses.json(await simulation.run(), pretty: true)
        } catch {
            return Responses.json(["error": error.description], status: 400)
        }
    }
}

/// `POST`/`GET /emulator/clock`'s answer.
private struct ClockAnswer: Encodable {
    /// Notifications delivered by this call (absent for `GET`).
    var delivered: Int?
    /// The emulator's now, ms since 1970.
    var now: Int64
    /// Seconds the emulator's clock is ahead of its configured clock.
    var offsetSeconds: Double
    /// Notifications still waiting for their date.
    var scheduled: Int

    init(emulator: Emulator, delivered: Int?) {
        self.delivered = delivered
        now = emulator.now.milliseconds
        offsetSeconds = emulator.clockOffset
        scheduled = emulator.scheduledNotificationCount
    }
}
