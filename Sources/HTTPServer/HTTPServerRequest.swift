public import Foundation
import HTTPCore

/// One request as `HTTPServer` received it.
public struct HTTPServerRequest: Sendable {
    public var method: String
    /// The request target exactly as sent: path and query, or an absolute URL when sent to a proxy.
    public var target: String
    /// The target's path, as sent (not percent-decoded).
    public var path: String
    /// The query's parameters, percent-decoded; for a repeated name the last value wins.
    public var query: [String: String]
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// When the server saw the request's bytes: a handler that finds it has waited too long behind
    /// other work can answer at once instead of late.
    public var receivedAt: ContinuousClock.Instant = .now

    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        query = [:]
        // Most targets have no query: the path is the target itself.
        guard target.utf8.contains(UInt8(ascii: "?")) else {
            path = target
            return
        }
        let pathAndQuery = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = pathAndQuery.first.map(String.init) ?? ""
        if pathAndQuery.count == 2 {
            for pair in pathAndQuery[1].split(separator: "&") where !pair.isEmpty {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.decode(parts[0])
                query[name] = parts.count == 2 ? Self.decode(parts[1]) : ""
            }
        }
    }

    public func header(_ name: String) -> String? {
        headers.first { HeaderName.matches($0.name, name) }?.value
    }

    private static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

extension HTTPServerRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "\(method) \(target) [\(SensitiveHeaders.redacted(headers).joined(separator: ", "))] \(body.count) bytes"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["method": method, "target": target,
                                "headers": SensitiveHeaders.redacted(headers), "bodyBytes": body.count],
               displayStyle: .struct)
    }
}
