import HTTPCore
public import HTTPServer

/// Answers every request with its own body, and tells in headers what it received.
public let echo: HTTPServer.Handler = { request in
    HTTPResponse(status: 200, headers: [
        ("X-Method", request.method),
        ("X-Path", request.path),
        ("X-Query-Name", request.query["name"] ?? ""),
        ("X-Received-Trace", request.header("X-Trace") ?? ""),
        ("X-Received-Content-Type", request.header("Content-Type") ?? ""),
        ("X-Received-Expect", request.header("Expect") ?? ""),
    ], body: request.body)
}
