import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import Testing

/// Every way a value reaches text: print, debug-print, dump and interpolation.
private func renderings(of value: some Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    return [String(describing: value), String(reflecting: value), dumped, "\(value)"]
}

@Suite("Credentials never show when requests are printed")
struct RedactionTests {
    let token = "Bearer eyJhbGciOiJFUzI1NiJ9.c2VjcmV0.c2lnbmF0dXJl"

    @Test("printing, debug-printing and dumping a request hide its Authorization header")
    func requestHidesAuthorization() {
        let request = HTTPRequest(method: "PUT", url: URL(string: "https://api.example.com/x")!,
                                  headers: [("Authorization", token), ("Content-Type", "application/json")])
        for text in renderings(of: request) {
            #expect(!text.contains("eyJ"), "leaked in: \(text)")
            #expect(text.contains("<redacted>"))
            #expect(text.contains("application/json"))
        }
    }

    @Test("printing, debug-printing and dumping a request the server received hide its Authorization header")
    func serverRequestHidesAuthorization() {
        let request = HTTPServerRequest(method: "GET", target: "/inApps/v1/messaging/message/list",
                                        headers: [("authorization", token), ("Accept", "application/json")])
        for text in renderings(of: request) {
            #expect(!text.contains("eyJ"), "leaked in: \(text)")
            #expect(text.contains("<redacted>"))
            #expect(text.contains("application/json"))
        }
    }

    @Test("dumping a client after requests finished shows no token")
    func clientKeepsNoFinishedRequests() async throws {
        let server = try HTTPServer { _ in HTTPResponse(status: 200) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        for _ in 0..<3 {
            _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL, headers: [("Authorization", token)]))
        }
        var dumped = ""
        dump(client, to: &dumped)
        #expect(!dumped.contains("eyJ"))
    }
}
