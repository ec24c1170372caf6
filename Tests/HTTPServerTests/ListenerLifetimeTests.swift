import Foundation
import HTTPCore
import HTTPClient
@testable import HTTPServer
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
