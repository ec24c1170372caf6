public import Foundation
public import HTTPCore
import HTTPServer
import RetentionMessaging
public import RetentionMessagingModels

/// The loopback HTTP/1.1 face of an `Emulator`: at `/inApps/v1/messaging` the environment the
/// client names in `X-Retention-Sync-Environment` (what `RetentionMessagingClient` sends to any
/// endpoint but Apple's), else `environment`; either environment under `/sandbox/…` or
/// `/production/…` (one process shares a sandbox pass with production), admin routes under
/// `/emulator/`, and `POST /emulator/shutdown` to ask the owner to stop.
public final class EmulatorServer: Sendable {
    public let emulator: Emulator
    public let environment: Environment
    private let server: HTTPServer

    /// Listens on `host:port` (0 picks a free port). `onShutdown` runs when a client posts
    /// `/emulator/shutdown`.
    public init(emulator: Emulator, environment: Environment, host: String = "127.0.0.1", port: UInt16 = 0,
                onShutdown: (@Sendable () -> Void)? = nil) throws(HTTPError) {
        self.emulator = emulator
        self.environment = environment
        // The emulator's own limit (with its explanation) must be what a large upload meets, not the server's.
        server = try HTTPServer(host: host, port: port,
                                configuration: HTTPServerConfiguration(maxBodySize: EmulatorConfiguration.maxBodySize + 1_048_576)) { request in
            if request.method == "POST" && request.path == "/emulator/shutdown" {
                onShutdown?()
                return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")],
                                    body: Data(#"{"stopping":true}"#.utf8))
            }
            var target = request.target.hasPrefix("/") ? request.target : "/" + request.target
            // The client names its environment in a header (`--env`), so one base URL serves both;
            // `/sandbox/…` and `/production/…` reach that environment whatever the header says.
            var chosen = request.header(RetentionMessagingClient.environmentRequestHeader)
                .flatMap { Environment(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) } ?? environment
            for other in Environment.allCases where target.hasPrefix("/\(other.rawValue)/") {
                chosen = other
                target.removeFirst(other.rawValue.count + 1)
            }
            let url = URL(string: "http://127.0.0.1" + target) ?? URL(string: "http://127.0.0.1/")!
            let forwarded = HTTPRequest(method: request.method, url: url, headers: request.headers, body: request.body)
            return await emulator.handle(forwarded, environment: chosen)
        }
    }

    public var port: UInt16 { server.port }
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { server.baseURL }
    /// The URL to give the client as its endpoint: `http://127.0.0.1:PORT/inApps/v1/messaging`.
    public var apiEndpoint: URL { server.baseURL.appendingPathComponent(String(RetentionMessagingPaths.base.dropFirst())) }

    /// The endpoint of either environment on this one server: `http://127.0.0.1:PORT/production/inApps/v1/messaging`.
    public func apiEndpoint(for environment: Environment) -> URL {
        server.baseURL.appendingPathComponent(environment.rawValue + RetentionMessagingPaths.base)
    }

    public func stop() { server.stop() }
}
