import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import Testing
import TestSupport

func url(_ server: HTTPServer, _ path: String) -> URL {
    URL(string: server.baseURL.absoluteString + path)!
}

/// The client's error kind for a request, or nil when it succeeded.
func errorKind(_ client: CurlHTTPClient, _ request: HTTPRequest) async -> HTTPError.Kind? {
    do {
        _ = try await client.send(request)
        return nil
    } catch {
        return error.kind
    }
}

@Suite("CurlHTTPClient against a loopback HTTPServer")
struct CurlHTTPClientTests {
    @Test("GET, PUT and DELETE send their method, headers and body, and the echo comes back")
    func methodsRoundTrip() async throws {
        let server = try HTTPServer(handler: echo)
        let client = CurlHTTPClient()
        for method in ["GET", "PUT", "DELETE", "POST"] {
            let body = Data("payload for \(method)".utf8)
            let response = try await client.send(HTTPRequest(
                method: method, url: url(server, "/v1/items?name=caf%C3%A9+latte"),
                headers: [("X-Trace", "trace-\(method)"), ("Content-Type", "application/json")], body: body))
            #expect(response.status == 200)
            #expect(response.body == body)
            #expect(response.header("X-Method") == method)
            #expect(response.header("X-Path") == "/v1/items")
            #expect(response.header("X-Query-Name") == "café latte")
            #expect(response.header("X-Received-Trace") == "trace-\(method)")
            #expect(response.header("X-Received-Content-Type") == "application/json")
            #expect(response.header("X-Received-Expect") == "")
        }
    }

    @Test("a PUT with an empty body and no Content-Type arrives empty and unlabelled")
    func emptyPut() async throws {
        let server = try HTTPServer(handler: echo)
        let response = try await CurlHTTPClient().send(HTTPRequest(method: "PUT", url: url(server, "/empty")))
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.header("X-Method") == "PUT")
        #expect(response.header("X-Received-Content-Type") == "")
    }

    @Test("response headers are returned, from the final response only after a redirect")
    func responseHeaders() async throws {
        let server = try HTTPServer { request in
            if request.path == "/old" {
                return HTTPResponse(status: 302, headers: [("Location", "/new"), ("X-Stage", "redirect")])
            }
            return HTTPResponse(status: 201, headers: [("X-Stage", "final"), ("Retry-After", "1700000000000")],
                                body: Data("moved".utf8))
        }
        let response = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: url(server, "/old")))
        #expect(response.status == 201)
        #expect(response.body == Data("moved".utf8))
        #expect(response.headers.filter { $0.name == "X-Stage" }.map(\.value) == ["final"])
        #expect(response.header("retry-after") == "1700000000000")
        #expect(response.header("Content-Length") == "5")
    }

    @Test("a server slower than the request's timeout gives a timeout error")
    func slowServerTimesOut() async throws {
        let server = try HTTPServer { request in
            try? await Task.sleep(for: .seconds(2))
            return HTTPResponse(status: 200)
        }
        let kind = await errorKind(CurlHTTPClient(), HTTPRequest(method: "GET", url: url(server, "/slow"), timeout: 0.5))
        #expect(kind == .timeout)
    }

    @Test("a port nobody listens on gives couldNotConnect")
    func refusedPort() async throws {
        let server = try HTTPServer(handler: echo)
        let closedURL = url(server, "/")
        server.stop()
        let kind = await errorKind(CurlHTTPClient(), HTTPRequest(method: "GET", url: closedURL))
        #expect(kind == .couldNotConnect)
        #expect(kind.map { HTTPError($0, "").isTransient } == true)
    }

    @Test("a server that drops the connection without answering gives connectionDropped")
    func droppedConnection() async throws {
        let server = try HTTPServer { _ in nil }
        let kind = await errorKind(CurlHTTPClient(), HTTPRequest(method: "PUT", url: url(server, "/drop"), body: Data("x".utf8)))
        #expect(kind == .connectionDropped)
    }

    @Test("50 concurrent requests all complete with their own bodies")
    func concurrentRequests() async throws {
        let server = try HTTPServer(handler: echo)
        let client = CurlHTTPClient()
        let results = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let response = try await client.send(HTTPRequest(
                        method: "POST", url: url(server, "/item/\(index)"), body: Data("body \(index)".utf8)))
                    return (index, response.body)
                }
            }
            var bodies: [Int: Data] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }
        #expect(results.count == 50)
        for index in 0..<50 {
            #expect(results[index] == Data("body \(index)".utf8))
        }
    }

    @Test("a 1 MiB body round-trips byte for byte")
    func largeBody() async throws {
        let server = try HTTPServer(handler: echo)
        var generator = SystemRandomNumberGenerator()
        let body = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let response = try await CurlHTTPClient().send(HTTPRequest(method: "PUT", url: url(server, "/big"), body: body))
        #expect(response.status == 200)
        #expect(response.body == body)
    }

    @Test("an http_proxy from the configured environment receives the request")
    func httpProxyFromEnvironment() async throws {
        let proxy = try HTTPServer { request in
            HTTPResponse(status: 200, body: Data("via proxy: \(request.target)".utf8))
        }
        let client = CurlHTTPClient(configuration: .init(environment: ["http_proxy": proxy.baseURL.absoluteString]))
        let response = try await client.send(HTTPRequest(method: "GET", url: URL(string: "http://api.example.invalid/v1/x")!))
        #expect(String(decoding: response.body, as: UTF8.self) == "via proxy: http://api.example.invalid/v1/x")
    }

    @Test("uppercase HTTPS_PROXY is used for https URLs")
    func uppercaseHTTPSProxy() async throws {
        let seen = Locked<[String]>()
        let proxy = try HTTPServer { request in
            seen.append("\(request.method) \(request.target)")
            return HTTPResponse(status: 403)
        }
        let client = CurlHTTPClient(configuration: .init(environment: ["HTTPS_PROXY": proxy.baseURL.absoluteString]))
        let kind = await errorKind(client, HTTPRequest(method: "GET", url: URL(string: "https://api.example.invalid/")!))
        #expect(kind != nil)
        #expect(seen.value == ["CONNECT api.example.invalid:443"])
    }

    @Test("uppercase NO_PROXY bypasses the proxy for the hosts it names")
    func uppercaseNoProxy() async throws {
        let server = try HTTPServer(handler: echo)
        let deadProxy = try HTTPServer(handler: echo)
        let deadProxyURL = deadProxy.baseURL.absoluteString
        deadProxy.stop()
        let client = CurlHTTPClient(configuration: .init(environment: ["http_proxy": deadProxyURL, "NO_PROXY": "127.0.0.1"]))
        let response = try await client.send(HTTPRequest(method: "GET", url: url(server, "/direct")))
        #expect(response.header("X-Path") == "/direct")
    }

    @Test("a header value with a line break is refused without echoing the value")
    func headerInjectionRefused() async throws {
        let server = try HTTPServer(handler: echo)
        do {
            _ = try await CurlHTTPClient().send(HTTPRequest(
                method: "GET", url: url(server, "/"), headers: [("Authorization", "Bearer secret-token\r\nX-Evil: 1")]))
            Issue.record("the request was sent")
        } catch {
            #expect(error.kind == .invalidRequest)
            #expect(!error.message.contains("secret-token"))
        }
    }

    @Test("a URL that is not http or https is an invalid request")
    func unsupportedScheme() async {
        let kind = await errorKind(CurlHTTPClient(), HTTPRequest(method: "GET", url: URL(string: "file:///etc/passwd")!))
        #expect(kind == .invalidRequest)
    }

    @Test("cancelling the waiting task ends the transfer")
    func cancellation() async throws {
        // The answer comes far later than any pool delay in a busy suite: only cancelling ends the wait.
        // Both the request's task and the server's handler need Swift's small concurrency pool, which a
        // full suite on two cores keeps busy for minutes (this test has waited 30 s in vain on a fresh
        // clone, and passed after 125 s in a full run), so the bounds are longer than the whole suite;
        // they bound a hang, they measure nothing.
        let arrived = DispatchSemaphore(value: 0)
        let server = try HTTPServer { _ in
            arrived.signal()
            try? await Task.sleep(for: .seconds(480))
            return HTTPResponse(status: 200)
        }
        let client = CurlHTTPClient()
        let task = Task { await errorKind(client, HTTPRequest(method: "GET", url: url(server, "/slow"))) }
        // Cancelled once the server holds the request, so the transfer is surely under way.
        #expect(try await onOwnThread { arrived.wait(timeout: .now() + 420) } == .success)
        task.cancel()
        // An answer would be no error at all: `.other` is the cancelled transfer.
        #expect(await task.value == .other)
    }
}

@Suite("CurlHTTPClient timeouts")
struct CurlHTTPClientTimeoutTests {
    @Test("a timeout on a reused connection is a timeout, not a connect timeout")
    func timeoutOnReusedConnection() async throws {
        let server = try HTTPServer { request in
            if request.path == "/slow" { try? await Task.sleep(for: .seconds(2)) }
            return HTTPResponse(status: 200)
        }
        let client = CurlHTTPClient(configuration: .init(maxConcurrentTransfers: 1))
        _ = try await client.send(HTTPRequest(method: "GET", url: url(server, "/fast")))
        let kind = await errorKind(client, HTTPRequest(method: "GET", url: url(server, "/slow"), timeout: 0.5))
        #expect(kind == .timeout)
    }

    @Test("a listener that never completes the handshake gives a connect timeout")
    func connectTimeout() async throws {
        let listener = try FullBacklogListener()
        let kind = await errorKind(CurlHTTPClient(), HTTPRequest(
            method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/")!, connectTimeout: 0.3))
        #expect(kind == .connectTimeout)
    }
}
