import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

@Suite("Identifiers in request paths")
struct PathSegmentTests {
    @Test("a product id of '..' or '.' stays one path segment on the wire and cannot reach another route")
    func dotSegmentsStayInTheirSegment() async throws {
        // Every request target exactly as it arrived on the wire.
        let targets = Locked<[String]>()
        let server = try HTTPServer { request in
            targets.append(request.target)
            return HTTPResponse(status: 404, body: Data(#"{"errorCode":4040020,"errorMessage":"Default not found."}"#.utf8))
        }
        defer { server.stop() }
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(server.port)/inApps/v1/messaging"))
        let client = TestApp().client(.sandbox, transport: CurlHTTPClient(), endpoint: endpoint, retry: .none)

        _ = try? await client.getDefaultMessage(productId: "..", locale: "en-US")
        _ = try? await client.getDefaultMessage(productId: ".", locale: "en-US")
        _ = try? await client.getDefaultMessage(productId: "a.b", locale: "en-US")
        #expect(targets.value == [
            "/inApps/v1/messaging/default/%2E%2E/en-US",
            "/inApps/v1/messaging/default/%2E/en-US",
            "/inApps/v1/messaging/default/a.b/en-US",
        ])
    }
}
