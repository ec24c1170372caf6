import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Testing

/// A recording loopback server: every request target exactly as it arrived on the wire.
private final class Targets: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    func add(_ target: String) { lock.withLock { seen.append(target) } }
    var all: [String] { lock.withLock { seen } }
}

@Suite("Identifiers in request paths")
struct PathSegmentTests {
    @Test("a product id of '..' or '.' stays one path segment on the wire and cannot reach another route")
    func dotSegmentsStayInTheirSegment() async throws {
        let targets = Targets()
        let server = try HTTPServer { request in
            targets.add(request.target)
            return HTTPResponse(status: 404, body: Data(#"{"errorCode":4040020,"errorMessage":"Default not found."}"#.utf8))
        }
        defer { server.stop() }
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(server.port)/inApps/v1/messaging"))
        let client = TestApp().client(.sandbox, transport: CurlHTTPClient(), endpoint: endpoint, retry: .none)

        _ = try? await client.getDefaultMessage(productId: "..", locale: "en-US")
        _ = try? await client.getDefaultMessage(productId: ".", locale: "en-US")
        _ = try? await client.getDefaultMessage(productId: "a.b", locale: "en-US")
        #expect(targets.all == [
            "/inApps/v1/messaging/default/%2E%2E/en-US",
            "/inApps/v1/messaging/default/%2E/en-US",
            "/inApps/v1/messaging/default/a.b/en-US",
        ])
    }
}
