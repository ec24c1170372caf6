public import Foundation
import Synchronization

/// One HTTP request as a value. Header names keep their spelling; lookups are case-insensitive.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// Seconds allowed to establish the connection; nil uses the client's default.
    public var connectTimeout: Double?
    /// Seconds allowed for the whole exchange; nil uses the client's default.
    public var timeout: Double?
    /// Signs the request with AWS Signature Version 4, computed by the transport (libcurl's own signer).
    public var awsSigV4: AWSSigV4Signing?

    public init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data = Data(),
                connectTimeout: Double? = nil, timeout: Double? = nil, awsSigV4: AWSSigV4Signing? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.awsSigV4 = awsSigV4
    }

    public func header(_ name: String) -> String? {
        headers.first { HeaderName.matches($0.name, name) }?.value
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.awsSigV4 == rhs.awsSigV4
            && lhs.headers.map { "\($0.name):\($0.value)" } == rhs.headers.map { "\($0.name):\($0.value)" }
    }
}

/// What AWS Signature Version 4 needs: the credential scope and the key pair. The payload hash is
/// the caller's `x-amz-content-sha256` header where the service requires one (S3 does).
/// The secret never appears in `description`, `dump` or a debugger.
public struct AWSSigV4Signing: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var region: String
    public var service: String
    public var accessKeyId: String
    public var secretAccessKey: String

    public init(region: String, service: String, accessKeyId: String, secretAccessKey: String) {
        self.region = region
        self.service = service
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
    }

    public var description: String { "AWS SigV4 (\(region)/\(service), key <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["region": region, "service": service], displayStyle: .struct)
    }
}

/// One HTTP response as a value.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { HeaderName.matches($0.name, name) }?.value
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { "\($0.name):\($0.value)" } == rhs.headers.map { "\($0.name):\($0.value)" }
    }
}

/// Anything that answers HTTP requests: the libcurl client, or the emulator in-process.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
    /// Sends `request` and blocks the calling thread until the answer: for a thread of the caller's
    /// own (the event recorder's), never one of Swift's concurrency pool, which must not wait.
    @available(*, noasync, message: "blocks the calling thread; from async code, await send(_:)")
    func sendWaiting(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError>
}

extension HTTPTransport {
    /// For transports that answer only asynchronously (in-process stand-ins): the answer comes
    /// through a task, so the pool must have a thread free. `CurlHTTPClient` answers on its own
    /// transfer threads instead and needs none.
    @available(*, noasync, message: "blocks the calling thread; from async code, await send(_:)")
    public func sendWaiting(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> {
        let answer = WaitingAnswer()
        Task {
            do throws(HTTPError) {
                answer.give(.success(try await send(request)))
            } catch {
                answer.give(.failure(error))
            }
        }
        return answer.wait()
    }
}

/// One answer handed from the thread that has it to the thread that waits for it.
public final class WaitingAnswer: Sendable {
    private let result = Mutex<Result<HTTPResponse, HTTPError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    public init() {}

    public func give(_ result: Result<HTTPResponse, HTTPError>) {
        self.result.withLock { $0 = result }
        ready.signal()
    }

    public func wait() -> Result<HTTPResponse, HTTPError> {
        ready.wait()
        return result.withLock { $0 } ?? .failure(HTTPError(.other, "the transport gave no answer"))
    }
}

/// Why an exchange produced no response. `message` is libcurl's own text where there is one.
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case connectTimeout, timeout, couldNotConnect, connectionDropped, tls, invalidRequest, other
    }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Whether trying again may succeed (a transient network failure).
    public var isTransient: Bool {
        switch kind {
        case .connectTimeout, .timeout, .couldNotConnect, .connectionDropped: true
        case .tls, .invalidRequest, .other: false
        }
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Header names whose values are credentials: never shown by `description`, `debugDescription`,
/// `dump` or a debugger, so a log line or crash report cannot leak a token.
public enum SensitiveHeaders {
    public static let names: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie",
                                            "x-amz-security-token"]

    public static func isSensitive(_ name: String) -> Bool { names.contains(name.lowercased()) }

    package static func redacted(_ headers: [(name: String, value: String)]) -> [String] {
        headers.map { "\($0.name): \(isSensitive($0.name) ? "<redacted>" : $0.value)" }
    }
}

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "\(method) \(url.absoluteString) [\(SensitiveHeaders.redacted(headers).joined(separator: ", "))] \(body.count) bytes"
            + (awsSigV4.map { ", signed with \($0)" } ?? "")
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["method": method, "url": url.absoluteString,
                                "headers": SensitiveHeaders.redacted(headers), "bodyBytes": body.count],
               displayStyle: .struct)
    }
}

extension HTTPResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "HTTP \(status) [\(SensitiveHeaders.redacted(headers).joined(separator: ", "))] \(body.count) bytes"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["status": status, "headers": SensitiveHeaders.redacted(headers), "bodyBytes": body.count],
               displayStyle: .struct)
    }
}

/// Header names are ASCII tokens, compared without regard to ASCII case (RFC 9110 §5.1); this
/// avoids Foundation's Unicode-aware comparison on every lookup.
package enum HeaderName {
    package static func matches(_ name: String, _ other: String) -> Bool {
        var left = name.utf8.makeIterator()
        var right = other.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let l?, let r?): if lowercased(l) != lowercased(r) { return false }
            default: return false
            }
        }
    }

    /// Names the HTTP/1.1 token rules allow, values without line breaks (header injection).
    package static func isValid(name: String, value: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { $0 > 32 && $0 < 127 && !separators.contains($0) }
            && !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
    }

    /// The characters RFC 9110 §5.6.2 keeps out of a token.
    private static let separators = Array("()<>@,;:\\\"/[]?={} \t".utf8)

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }
}
