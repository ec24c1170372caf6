import Basics
import Crypto
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// Decisions per second and latency for a generated 1,000-rule snapshot in which the answering
/// rule is the last one, and every rule before it names the request's product, so each decision
/// evaluates all 1,000 rules (locale, window and split checks, bucket hashing included).
@Sendable func runtimeBenchmark(_ arguments: [String]) async throws {
    var iterations = 50_000
    if let index = arguments.firstIndex(of: "--iterations"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        iterations = value
    }
    let key = ES256PrivateKey.generate()
    let signer = PromotionalOfferSigner(keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                        bundleId: "com.example.app", privateKey: key, clock: SystemClock())
    print("runtime: 1,000-rule snapshot, every rule a candidate, the last one answers; \(iterations) decisions per run")
    for (label, kind) in [("message (no signing)", SnapshotResponse.Kind.message),
                          ("promotional offer (ES256 signing)", .promotionalOffer)] {
        let snapshot = try generatedSnapshot(lastRule: kind).sealed()
        let engine = DecisionEngine(snapshot: snapshot, signer: signer)
        var request = DecodedRealtimeRequestBody(
            originalTransactionId: "", appAppleId: 1_234_567_890, productId: "com.example.monthly", userLocale: "en-US",
            requestIdentifier: "6f1e4b9e-8a43-4c8e-9a59-0d3c1b7f6a10", environment: "Production",
            signedDate: 1_780_315_200_000)
        var latencies = [UInt64](repeating: 0, count: iterations)
        var answered = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<iterations {
            request.originalTransactionId = String(2_000_000_000_000_000 + index)
            let before = DispatchTime.now().uptimeNanoseconds
            if case .respond = try engine.decide(request) { answered += 1 }
            latencies[index] = DispatchTime.now().uptimeNanoseconds - before
        }
        let total = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        latencies.sort()
        func percentile(_ p: Double) -> String {
            let value = Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1000
            return String(format: "%.1f µs", value)
        }
        print("  \(label): \(String(format: "%.0f", Double(iterations) / total)) decisions/s, "
              + "p50 \(percentile(0.50)), p99 \(percentile(0.99)), max \(percentile(1.0)) (\(answered) answered)")
    }
}

/// 999 rules that name the benchmark product but miss on locale, time window or split, then one
/// rule that answers every request.
private func generatedSnapshot(lastRule kind: SnapshotResponse.Kind) -> RuntimeSnapshot {
    let product = "com.example.monthly"
    let locales = ["de-DE", "fr-FR", "ja-JP", "es-ES", "it-IT", "pt-BR", "ko-KR", "zh-Hans", "nl-NL", "sv-SE"]
    var rules: [SnapshotRule] = []
    for index in 0..<999 {
        var match = SnapshotMatch(products: [product, "com.example.product\(index % 50)"])
        switch index % 3 {
        case 0:
            match.locales = [locales[index % locales.count], locales[(index + 3) % locales.count]]
        case 1:
            match.notBefore = 1_700_000_000_000 + Int64(index) * 1_000
            match.notAfter = 1_750_000_000_000
        default:
            // A one-bucket share of a split group: the bucket is hashed, and falls in it once in 10,000.
            match.split = SnapshotSplit(salt: "group-\(index % 20)", lowerBucket: 0, upperBucket: 1)
            match.locales = ["en-US"]
        }
        rules.append(SnapshotRule(id: "flow\(index / 100)/rule\(index)", version: "0123456789abcdef", match: match,
                                  response: SnapshotResponse(kind: .message, message: "m\(index)",
                                                             messageIdentifiers: identifiers(index))))
    }
    let last = SnapshotResponse(kind: kind, message: "last", messageIdentifiers: identifiers(999),
                                offerIdentifier: kind == .promotionalOffer ? "winback-50" : nil)
    rules.append(SnapshotRule(id: "fallback/last", version: "0123456789abcdef", match: SnapshotMatch(products: [product]),
                              response: last))
    return RuntimeSnapshot(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production,
                           localeFallbacks: [:], rules: rules)
}

private func identifiers(_ index: Int) -> [String: String] {
    let suffix = String(index)
    let identifier = "00000000-0000-5000-8000-" + String(repeating: "0", count: 12 - suffix.count) + suffix
    return ["en-US": identifier, "de-DE": identifier, "fr-FR": identifier]
}
