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

enum LogValue {
    case text(String)
    case number(Double)
    case integer(Int64)
}

extension LogValue: ExpressibleByStringLiteral {
    init(stringLiteral value: String) { self = .text(value) }
}
