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

    private let requests = Locked<[Received]>()
    private let reply = Locked((status: 200, body: "ok"))
    public let server: HTTPServer

    /// `path` is the secret part of the URL, as a Slack incoming webhook's is.
    public init(answering status: Int = 200, body: String = "ok") throws {
        let requests = requests, reply = reply
        reply.set((status: status, body: body))
        server = try HTTPServer { request in
            requests.append(Received(path: request.path, contentType: request.header("Content-Type"), body: request.body))
            let (status, body) = reply.value
            return HTTPResponse(status: status, body: Data(body.utf8))
        }
    }

    public func url(path: String) -> URL { URL(string: server.baseURL.absoluteString + path)! }

    public var received: [Received] { requests.value }

    /// Changes the answer to later requests.
    public func answer(_ status: Int, body: String = "") { reply.set((status: status, body: body)) }

    public func stop() { server.stop() }
}
