import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import Testing

@Suite("AWS Signature V4 by libcurl")
struct AWSSigV4Tests {
    @Test("a signed request carries libcurl's SigV4 Authorization, signing only headers the server receives")
    func signedRequest() async throws {
        let server = try HTTPServer { request in
            HTTPResponse(status: 200, headers: [("X-Authorization", request.header("Authorization") ?? ""),
                                                ("X-Amz-Date-Received", request.header("X-Amz-Date") ?? "")])
        }
        let body = Data(#"{"format_version":"1.0"}"#.utf8)
        let response = try await CurlHTTPClient().send(HTTPRequest(
            method: "PUT", url: URL(string: "http://127.0.0.1:\(server.port)/bucket/key.json")!,
            headers: [("Content-Type", "application/json"), ("If-None-Match", "*"),
                      ("x-amz-content-sha256", "0000000000000000000000000000000000000000000000000000000000000000")],
            body: body,
            awsSigV4: AWSSigV4Signing(region: "eu-west-1", service: "s3", accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret-key")))
        let authorization = try #require(response.header("X-Authorization"))
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"))
        #expect(authorization.contains("/eu-west-1/s3/aws4_request"))
        // libcurl 7.88 would also sign the empty "Expect:" removal, which no server ever sees.
        #expect(authorization.contains("SignedHeaders=content-type;host;if-none-match;x-amz-content-sha256;x-amz-date,"))
        #expect(!authorization.contains("secret-key"))
        #expect(response.header("X-Amz-Date-Received")?.count == 16)
    }

    @Test("printing a signed request never shows the secret key or a session token")
    func redaction() {
        let request = HTTPRequest(method: "GET", url: URL(string: "https://bucket.s3.amazonaws.com/key")!,
                                  headers: [("x-amz-security-token", "session-token")],
                                  awsSigV4: AWSSigV4Signing(region: "us-east-1", service: "s3", accessKeyId: "AKID", secretAccessKey: "secret-key"))
        var dumped = ""
        dump(request, to: &dumped)
        dump(request.awsSigV4, to: &dumped)
        let printed = "\(request) \(String(reflecting: request)) \(String(describing: request.awsSigV4)) " + dumped
        #expect(!printed.contains("secret-key"))
        #expect(!printed.contains("session-token"))
    }
}
