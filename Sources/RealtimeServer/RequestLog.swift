import Crypto
import Foundation

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
        String(Digest.sha256Hex(salt + Array(originalTransactionId.utf8)).prefix(16))
    }

    func write(_ fields: [String: LogValue]) {
        var line = "{"
        for (index, key) in fields.keys.sorted().enumerated() {
            if index > 0 { line += "," }
            line += Self.quoted(key) + ":"
            switch fields[key]! {
            case .text(let text): line += Self.quoted(text)
            case .number(let number): line += String(number)
            case .integer(let number): line += String(number)
            }
        }
        sink(line + "}")
    }

    /// The line `write(entry.fields)` would write, built straight into bytes in the same key order.
    func write(_ entry: RequestLogEntry) {
        var line: [UInt8] = []
        line.reserveCapacity(512)
        line.append(UInt8(ascii: "{"))
        func key(_ name: StaticString) {
            if line.count > 1 { line.append(UInt8(ascii: ",")) }
            line.append(UInt8(ascii: "\""))
            line.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            line.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func text(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            Self.appendQuoted(value, to: &line)
        }
        text("environment", entry.environment)
        text("kind", entry.kind)
        key("latencyMs")
        line.append(contentsOf: String(entry.latencyMs).utf8)
        text("messageIdentifier", entry.messageIdentifier)
        text("outcome", entry.outcome)
        text("path", entry.path)
        text("productId", entry.productId)
        text("reason", entry.reason)
        text("requestIdentifier", entry.requestIdentifier)
        text("rule", entry.rule)
        text("snapshot", entry.snapshot)
        text("splitGroup", entry.splitGroup)
        key("status")
        line.append(contentsOf: String(entry.status).utf8)
        text("time", entry.time)
        text("transaction", entry.transaction)
        text("userLocale", entry.userLocale)
        line.append(UInt8(ascii: "}"))
        sink(String(decoding: line, as: UTF8.self))
    }

    /// `quoted(text)`, appended as bytes.
    static func appendQuoted(_ text: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                         hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\""))
    }

    static func quoted(_ text: String) -> String {
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
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
    var splitGroup: String?

    /// The same line as a dictionary, the form `write(_:)` takes for every other event.
    var fields: [String: LogValue] {
        var fields: [String: LogValue] = ["environment": .text(environment), "path": .text(path), "outcome": .text(outcome),
                                          "status": .integer(Int64(status)), "latencyMs": .number(latencyMs), "time": .text(time)]
        let optional: [(String, String?)] = [
            ("reason", reason), ("requestIdentifier", requestIdentifier), ("productId", productId), ("userLocale", userLocale),
            ("transaction", transaction), ("snapshot", snapshot), ("rule", rule), ("kind", kind),
            ("messageIdentifier", messageIdentifier), ("splitGroup", splitGroup),
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
