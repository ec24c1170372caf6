import Foundation
import HTTPCore
import HTTPClient
@testable import HTTPServer
import Synchronization
import Testing
import TestSupport

@Suite("The listening socket is let go of exactly once")
struct ListenerLifetimeTests {
    /// After a drain, the accept thread closes the listener, and the system may hand its number to any
    /// new socket of the process (another server's connection, a client's): shutting it down again when
    /// the server stops would cut that socket, which once made an unrelated test's request fail with
    /// "Empty reply from server".
    @Test("draining and then stopping a server shuts its listener down once", arguments: ServerModel.allCases)
    func drainThenStop(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), synchronousHandler: { _ in
            HTTPResponse(status: 200, body: Data("ok".utf8))
        })
        #expect(try await rawExchange(port: server.port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200 "))
        #expect(try await onOwnThread { server.drain(timeout: 5) })
        server.stop()
        server.stop()
        #expect(server.listenerShutdowns == 1)
    }

    @Test("stopping a server twice shuts its listener down once", arguments: ServerModel.allCases)
    func stopTwice(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), synchronousHandler: { _ in nil })
        server.stop()
        server.stop()
        #expect(server.listenerShutdowns == 1)
    }
}

@Suite("A socket the tests give up is closed exactly once")
struct TestSocketLifetimeTests {
    /// A connection attempt that is refused closes its socket and throws; a class whose initializer
    /// throws still runs its `deinit`, which closed the same number a second time. By then the
    /// system may have handed that number to a connection another server just accepted, and its
    /// client got "Empty reply from server" — the rare failure of unrelated tests in full runs.
    @Test("refused connections beside a busy server never cut one of its connections")
    func refusedConnectionsBesideBusyServer() async throws {
        let server = try HTTPServer(configuration: ServerModel.eventLoops.configuration(), synchronousHandler: { _ in
            HTTPResponse(status: 200, body: Data("ok".utf8))
        })
        let refusing = try RefusingPort()
        let finished = Atomic<Bool>(false)
        async let refusals: Int = onOwnThread {
            var count = 0
            while !finished.load(ordering: .relaxed) && count < 100_000 {
                if (try? LoopbackConnection(port: refusing.port)) == nil { count += 1 }
            }
            return count
        }
        // A client of its own for each request: a fresh connection, so a cut one cannot be retried.
        let failures = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<6 {
                group.addTask {
                    var failures: [String] = []
                    for _ in 0..<150 {
                        do {
                            let response = try await CurlHTTPClient(configuration: .init(timeout: 10)).send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("x")))
                            if response.status != 200 { failures.append("status \(response.status)") }
                        } catch {
                            failures.append("\(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        finished.store(true, ordering: .relaxed)
        #expect(try await refusals > 0)
        let failed = failures.count
        #expect(failed == 0, "\(failed) of 900 requests failed, among them: \(Set(failures).sorted().prefix(4))")
    }
}
