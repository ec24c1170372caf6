public import Foundation
import HTTPCore
import HTTPClient
public import HTTPServer

/// A webhook receiver on loopback: records every request it gets and answers with the status the
/// test sets (200 unless told otherwise). Stopped by the test, or when it goes away.
public final class WebhookReceiver: Sendable {
    public struct Received: Sendable {
        public var path: String
        public var contentType: String?
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    private let box = Box()
    public let server: HTTPServer

    /// `path` is the secret part of the URL, as a Slack incoming webhook's is.
    public init(answering status: Int = 200, body: String = "ok") throws {
        let box = box
        box.set(status: status, body: body)
        server = try HTTPServer { request in
            box.append(Received(path: request.path, contentType: request.header("Content-Type"), body: request.body))
            let (status, body) = box.answer
            return HTTPResponse(status: status, body: Data(body.utf8))
        }
    }

    public func url(path: String) -> URL { URL(string: server.baseURL.absoluteString + path)! }

    public var received: [Received] { box.received }

    /// Changes the answer to later requests.
    public func answer(_ status: Int, body: String = "") { box.set(status: status, body: body) }

    public func stop() { server.stop() }

    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var requests: [Received] = []
        private var status = 200
        private var body = "ok"

        func append(_ request: Received) { lock.withLock { requests.append(request) } }
        var received: [Received] { lock.withLock { requests } }
        var answer: (Int, String) { lock.withLock { (status, body) } }
        func set(status: Int, body: String) { lock.withLock { self.status = status; self.body = body } }
    }
}
