import Basics
import Crypto
import Foundation
import RetentionMessagingModels

/// One JSON line per request (and per snapshot event) on standard error, keys sorted. It never
/// holds the signedPayload, a signature, a key or a raw originalTransactionId: the transaction is
/// logged as a hash salted per process, enough to follow one customer's requests in one log.
public struct RequestLog: Sendable {
    public typealias Sink = @Sendable (String) -> Void

    private let sink: Sink
    private let salt: [UInt8]

    public init(sink: @escaping Sink = RequestLog.standardError) {
        self.sink = sink
        salt = CryptoRandom.bytes(16)
    }

    public static let standardError: Sink = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    func transactionHash(_ originalTransactionId: String) -> String {
        var state = SHA256State()
        state.update(salt[...])
        state.update(Array(originalTransactionId.utf8)[...])
        return Array(state.digest().prefix(8)).hexString
    }

    /// A line about the service itself (`{"event": …, "message": …, "time": …}`).
    func event(_ name: String, _ message: String, time: UTCTime) {
        write(["event": .text(name), "message": .text(message), "time": .text(time.formatted())])
    }

    func write(_ fields: [String: LogValue]) {
        var json = CanonicalJSONWriter(capacity: 256)
        json.object { json in
            for key in fields.keys.sorted() {
                switch fields[key]! {
                case .text(let text): json.member(key, string: text)
                case .number(let number): json.member(key, literal: String(number))
                case .integer(let number): json.member(key, integer: number)
                }
            }
        }
        sink(String(decoding: json.bytes, as: UTF8.self))
    }

    /// The line `write(entry.fields)` would write, without building and sorting a dictionary:
    /// the members are written in their sorted order here.
    func write(_ entry: RequestLogEntry) {
        var json = CanonicalJSONWriter(capacity: 512)
        json.object { json in
            func text(_ name: String, _ value: String?) {
                if let value { json.member(name, string: value) }
            }
            text("environment", entry.environment)
            text("kind", entry.kind)
            json.member("latencyMs", literal: String(entry.latencyMs))
            text("messageIdentifier", entry.messageIdentifier)
            text("outcome", entry.outcome)
            text("path", entry.path)
            text("productId", entry.productId)
            text("reason", entry.reason)
            text("requestIdentifier", entry.requestIdentifier)
            text("rule", entry.rule)
            text("snapshot", entry.snapshot)
            text("splitBuckets", entry.splitBuckets)
            text("splitGroup", entry.splitGroup)
            json.member("status", integer: Int64(entry.status))
            text("time", entry.time)
            text("transaction", entry.transaction)
            text("userLocale", entry.userLocale)
        }
        sink(String(decoding: json.bytes, as: UTF8.self))
    }
}

/// The fields of one realtime request's log line; nil fields are left out.
struct RequestLogEntry {
    var environment: String
    var path: String
    var outcome = ""
    var status = 0
    var latencyMs = 0.0
    var time = ""
    var reason: String?
    var requestIdentifier: String?
    var productId: String?
    var userLocale: String?
    var transaction: String?
    var snapshot: String?
    var rule: String?
    var kind: String?
    var messageIdentifier: String?
    /// The split group's name, as decision events and `results` name it.
    var splitGroup: String?
    /// The arm's bucket range in its group, `lower-upper` of 10,000.
    var splitBuckets: String?

    /// The same line as a dictionary, the form `write(_:)` takes for every other event.
    var fields: [String: LogValue] {
        var fields: [String: LogValue] = ["environment": .text(environment), "path": .text(path), "outcome": .text(outcome),
                                          "status": .integer(Int64(status)), "latencyMs": .number(latencyMs), "time": .text(time)]
        let optional: [(String, String?)] = [
            ("reason", reason), ("requestIdentifier", requestIdentifier), ("productId", productId), ("userLocale", userLocale),
            ("transaction", transaction), ("snapshot", snapshot), ("rule", rule), ("kind", kind),
            ("messageIdentifier", messageIdentifier), ("splitGroup", splitGroup), ("splitBuckets", splitBuckets),
        ]
        for case let (key, value?) in optional { fields[key] = .text(value) }
        return fields
    }
}

enum LogValue {
    case text(String)
    case number(Double)
    case integer(Int64)
}

extension LogValue: ExpressibleByStringLiteral {
    init(stringLiteral value: String) { self = .text(value) }
}
