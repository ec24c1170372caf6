import Foundation
import TestSupport
import RetentionMessagingModels
import Runtime

/// The files under `fixtures/runtime/` at the repository's root.
enum RuntimeFixtures {
    static let directory = Repository.url("fixtures/runtime")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static func text(_ name: String) throws -> String { try String(contentsOf: url(name), encoding: .utf8) }
}

let appAppleId: Int64 = 1_234_567_890
let bundleId = "com.example.app"
let monthly = "com.example.monthly"
let yearly = "com.example.yearly"
let weekly = "com.example.weekly"

/// A recognisable message identifier: `00000000-0000-5000-8000-0000000000nn`.
func uuid(_ number: Int) -> String {
    let digits = String(number)
    return "00000000-0000-5000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
}

/// RFC 3339 UTC → UNIX milliseconds.
func ms(_ text: String) -> Int64 {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
    guard let date = formatter.date(from: text) else { fatalError("not an RFC 3339 timestamp: \(text)") }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}

func request(product: String = monthly, locale: String = "en-US", transaction: String = "2000000000000001",
             environment: String = "Production", app: Int64 = appAppleId,
             signedDate: String = "2026-06-01T12:00:00Z") -> DecodedRealtimeRequestBody {
    DecodedRealtimeRequestBody(originalTransactionId: transaction, appAppleId: app, productId: product,
                               userLocale: locale, requestIdentifier: "6f1e4b9e-8a43-4c8e-9a59-0d3c1b7f6a10",
                               environment: environment, signedDate: ms(signedDate))
}

/// The first synthetic transaction id whose bucket for `salt` falls in `range`.
func transaction(inBuckets range: Range<Int>, salt: String) -> String {
    var number = 2_000_000_000_000_000
    while !range.contains(TrafficBucket.bucket(salt: salt, originalTransactionId: String(number))) { number += 1 }
    return String(number)
}

func message(_ name: String, _ identifiers: [String: String]) -> SnapshotResponse {
    SnapshotResponse(kind: .message, message: name, messageIdentifiers: identifiers)
}

func rule(_ id: String, _ match: SnapshotMatch, _ response: SnapshotResponse) -> SnapshotRule {
    SnapshotRule(id: id, version: "0123456789abcdef", match: match, response: response)
}

/// A production flow that uses every kind of match and every kind of response:
/// 1. yearly en-US customers are offered the monthly plan;
/// 2. de-DE monthly customers (and de-AT through the fallback) get a promotional offer;
/// 3. a holiday message in December 2026, in en-US and fr-FR;
/// 4. a spring message in March 2026 that exists only in en-US;
/// 5–7. a 50/30/20 price test for en-US and ja-JP monthly customers, the last 20% a holdout (none);
/// 8. a generic message for every product.
let sampleSnapshot = RuntimeSnapshot(
    bundleId: bundleId, appAppleId: appAppleId, environment: .production,
    localeFallbacks: ["de-AT": "de-DE", "fr": "fr-FR"],
    rules: [
        rule("winback/yearly-to-monthly", SnapshotMatch(products: [yearly], locales: ["en-US"]),
             SnapshotResponse(kind: .alternateProduct, message: "try-monthly", messageIdentifiers: ["en-US": uuid(1)],
                              productId: monthly, billingPlanType: .monthly)),
        rule("winback/german-offer", SnapshotMatch(products: [monthly], locales: ["de-DE"]),
             SnapshotResponse(kind: .promotionalOffer, message: "half-price", messageIdentifiers: ["de-DE": uuid(2)],
                              offerIdentifier: "de-winback-50")),
        rule("seasonal/holiday", SnapshotMatch(products: [monthly], notBefore: ms("2026-12-01T00:00:00Z"),
                                               notAfter: ms("2027-01-01T00:00:00Z")),
             message("holiday", ["en-US": uuid(3), "fr-FR": uuid(4)])),
        rule("seasonal/spring", SnapshotMatch(products: [monthly], notBefore: ms("2026-03-01T00:00:00Z"),
                                              notAfter: ms("2026-04-01T00:00:00Z")),
             message("spring", ["en-US": uuid(5)])),
        rule("price-test/a", SnapshotMatch(products: [monthly], locales: ["en-US", "ja-JP"],
                                           split: SnapshotSplit(salt: "price-test", lowerBucket: 0, upperBucket: 5000)),
             message("price-a", ["en-US": uuid(6), "ja-JP": uuid(7)])),
        rule("price-test/b", SnapshotMatch(products: [monthly], locales: ["en-US", "ja-JP"],
                                           split: SnapshotSplit(salt: "price-test", lowerBucket: 5000, upperBucket: 8000)),
             message("price-b", ["en-US": uuid(8), "ja-JP": uuid(9)])),
        rule("price-test/holdout", SnapshotMatch(products: [monthly], locales: ["en-US", "ja-JP"],
                                                 split: SnapshotSplit(salt: "price-test", lowerBucket: 8000, upperBucket: 10000)),
             SnapshotResponse(kind: .none)),
        rule("generic/any", SnapshotMatch(),
             message("generic", ["en-US": uuid(10), "de-DE": uuid(11), "fr-FR": uuid(12)])),
    ])
