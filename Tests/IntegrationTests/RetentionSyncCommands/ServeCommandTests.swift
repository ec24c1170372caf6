import CLIKit
import Crypto
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessagingModels
import RetentionSyncCommands
import Runtime
@testable import CommandTestSupport
import Testing
import TestSupport

/// `retention-sync serve` as a real process on a free loopback port, with an Apple-style chain,
/// a snapshot file and (for TLS) a certificate made by the openssl tool.
private struct ServeSetup: Sendable {
    let directory: URL
    let chain: AppleStyleSigningChain
    let snapshot: RuntimeSnapshot
    static let messageId = "00000000-0000-5000-8000-000000000001"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chain = try AppleStyleSigningChain()
        try Data(chain.root.pem.utf8).write(to: directory.appendingPathComponent("root.pem"))
        snapshot = try RuntimeSnapshot(
            bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production, localeFallbacks: [:],
            rules: [SnapshotRule(id: "everyone", version: "0123456789abcdef", match: SnapshotMatch(),
                                 response: SnapshotResponse(kind: .message, message: "stay",
                                                            messageIdentifiers: ["en-US": Self.messageId]))]).sealed()
        try snapshot.encoded().write(to: directory.appendingPathComponent("snapshot.json"))
    }

    func body() throws -> Data {
        let request = DecodedRealtimeRequestBody(
            originalTransactionId: "2000000000000001", appAppleId: 1_234_567_890, productId: "com.example.monthly",
            userLocale: "en-US", requestIdentifier: UUID().uuidString.lowercased(), environment: "Production",
            signedDate: Int64(Date().timeIntervalSince1970 * 1000))
        let signed = try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(request)))
        return try JSONSerialization.data(withJSONObject: ["signedPayload": signed])
    }

    func start(_ extra: [String] = [], name: String) async throws -> (ChildProcess, URL) {
        let child = try ChildProcess(["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0"] + extra,
                                     in: directory, environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""], name: name)
        let prefix = "serving production on "
        let line = try #require(await child.line(startingWith: prefix, within: 20), "serve did not start: \(child.errors)")
        return (child, try #require(URL(string: String(line.dropFirst(prefix.count)))))
    }

    /// A self-signed certificate for 127.0.0.1 written to cert.pem and key.pem by the openssl tool.
    func makeCertificate() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                             "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1"]
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
    }
}

/// Polls `condition` every 5 ms for at most `seconds`; blocks, so call it on a thread of its own.
private func poll(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(5_000)
    }
    return true
}

/// The open connections serve's /metrics counts, asked over a connection of its own (counted too).
private func openConnections(port: UInt16) -> Int? {
    guard let probe = try? LoopbackConnection(port: port, timeout: 10) else { return nil }
    let text = probe.exchange("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    let line = text.split(separator: "\n").first { $0.hasPrefix("retention_sync_open_connections ") }
    return line.flatMap { Int($0.dropFirst("retention_sync_open_connections ".count).trimmingCharacters(in: .whitespaces)) }
}

/// Whether a new connection to `port` is taken (then closed at once) rather than refused.
private func acceptsConnections(port: UInt16) -> Bool {
    guard let probe = try? LoopbackConnection(port: port, timeout: 1) else { return false }
    probe.close()
    return true
}

@Suite("retention-sync serve, as a process")
struct ServeCommandTests {
    @Test("serving HTTPS with a certificate made by openssl answers Apple, and SIGHUP picks up a new certificate")
    func servesTLSAndReloadsOnSIGHUP() async throws {
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        try await onOwnThread { try setup.makeCertificate() }
        let firstCertificate = setup.directory.appendingPathComponent("first-cert.pem")
        try FileManager.default.copyItem(at: setup.directory.appendingPathComponent("cert.pem"), to: firstCertificate)
        let (child, url) = try await setup.start(["--tls-cert", "cert.pem", "--tls-key", "key.pem"], name: "tls")
        #expect(url.scheme == "https")
        let client = CurlHTTPClient(configuration: .init(caBundlePath: firstCertificate.path))
        let response = try await client.send(HTTPRequest(method: "POST", url: url, body: try setup.body()))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"message":{"messageIdentifier":"\#(ServeSetup.messageId)"}}"#)

        try await onOwnThread { try setup.makeCertificate() }
        kill(child.process.processIdentifier, SIGHUP)
        for _ in 0..<500 where !child.errors.contains("tls_reloaded") { try await Task.sleep(for: .milliseconds(20)) }
        #expect(child.errors.contains("tls_reloaded"))
        let renewed = CurlHTTPClient(configuration: .init(caBundlePath: setup.directory.appendingPathComponent("cert.pem").path))
        #expect(try await renewed.send(HTTPRequest(method: "POST", url: url, body: try setup.body())).status == 200)

        kill(child.process.processIdentifier, SIGTERM)
        #expect(await child.finish(within: 30) == 0)
    }

    @Test("SIGTERM while a request is in flight: it is answered, then the process exits 0")
    func drainsOnSIGTERM() async throws {
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let (child, url) = try await setup.start(name: "drain")
        let port = try #require(url.port)
        let body = try setup.body()
        let head = "POST \(url.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n\r\n"
        let half = body.count / 2
        let connection = try LoopbackConnection(port: UInt16(port), timeout: 20)
        let pid = child.process.processIdentifier
        // On a thread of its own: with the whole suite running, Swift's two pool threads can be
        // busy for seconds, and a Task.sleep stretched past serve's 10 s request timeout would
        // turn the request in flight into a slow client that is rightly cut off.
        let probed = UInt16(port)
        let (held, draining, answer) = try await onOwnThread { () -> (Bool, Bool, String) in
            connection.send(Array(head.utf8) + Array(body.prefix(half)))
            // The signal must find the request in flight. Connections are accepted in the order they
            // arrive, so once /metrics, asked over a later connection, counts two open, serve holds this one.
            let held = poll(within: 20) { (openConnections(port: probed) ?? 0) >= 2 }
            kill(pid, SIGTERM)
            // The rest goes once serve drains, which shuts its listener: new connections are refused.
            let draining = poll(within: 20) { !acceptsConnections(port: probed) }
            connection.send(Array(body.dropFirst(half)))
            return (held, draining, connection.readToEnd())
        }
        #expect(held, "serve did not take the connection: \(child.errors)")
        #expect(draining, "serve did not start draining: \(child.errors)")
        #expect(answer.hasPrefix("HTTP/1.1 200 "))
        #expect(answer.contains("Connection: close"))
        #expect(answer.hasSuffix(#"{"message":{"messageIdentifier":"\#(ServeSetup.messageId)"}}"#))
        #expect(await child.finish(within: 30) == 0)
        #expect(String(decoding: child.output, as: UTF8.self).contains("stopped (SIGTERM)"))
    }

    @Test("--manifests serves each environment on its realtimeURL's path and is not ready without snapshots")
    func manifestsChoosePaths() async throws {
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let repository = Repository.root
        try FileManager.default.copyItem(at: repository.appendingPathComponent("manifests"), to: setup.directory.appendingPathComponent("manifests"))
        let child = try ChildProcess(["serve", "--env", "sandbox,production", "--manifests", "manifests", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0"],
                                     in: setup.directory, environment: [:], name: "manifests")
        let sandbox = try #require(await child.line(startingWith: "serving sandbox on ", within: 20), "serve did not start: \(child.errors)")
        let production = try #require(await child.line(startingWith: "serving production on ", within: 20), "serve did not start: \(child.errors)")
        #expect(sandbox.hasSuffix("/apple/sandbox"))
        #expect(production.hasSuffix("/apple/production"))
        let base = try #require(URL(string: String(production.dropFirst("serving production on ".count))))
        let readyz = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: try #require(URL(string: "/readyz", relativeTo: base))))
        #expect(readyz.status == 503)
        #expect(String(decoding: readyz.body, as: UTF8.self).contains("production-snapshot.json"))
        child.process.interrupt()
        #expect(await child.finish(within: 30) == 0)
    }

    @Test("after apply, serve --manifests answers from the state apply wrote at the App's snapshotPath")
    func servesWhatApplyPublished() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        try FileManager.default.copyItem(at: setup.directory.appendingPathComponent("root.pem"), to: harness.file("root.pem"))
        let child = try ChildProcess(["serve", "--env", "sandbox", "--manifests", "manifests", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0"],
                                     in: harness.root, environment: [:], name: "after-apply")
        let line = try #require(await child.line(startingWith: "serving sandbox on ", within: 20), "serve did not start: \(child.errors)")
        let base = try #require(URL(string: String(line.dropFirst("serving sandbox on ".count))))
        var ready = 0
        for _ in 0..<100 where ready != 200 {
            ready = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: try #require(URL(string: "/readyz", relativeTo: base)))).status
            if ready != 200 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(ready == 200, "the published snapshot loads: \(child.errors)")
        child.process.interrupt()
        #expect(await child.finish(within: 30) == 0)
    }

    @Test("serve --events under a regular file exits 78 at start, saying which path is a file and what to do")
    func unwritableEventsExit78() async throws {
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        // A path under a regular file: no user, root included, can create a folder there.
        try Data("not a folder\n".utf8).write(to: setup.directory.appendingPathComponent("file"))
        let events = setup.directory.appendingPathComponent("file/events").path
        let child = try ChildProcess(["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0", "--events", events],
                                     in: setup.directory,
                                     environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "",
                                                   "RETENTION_SYNC_PSEUDONYM_SECRET": String(repeating: "ab", count: 32)],
                                     name: "serve-unwritable")
        #expect(await child.finish(within: 20) == 78)
        let errors = child.errors
        #expect(errors.contains("--events \(events) cannot be written"), "\(errors)")
        #expect(errors.contains("\(setup.directory.appendingPathComponent("file").standardizedFileURL.path) is a file, not a folder"), "\(errors)")
        #expect(errors.contains("give --events a folder this user can write"), "\(errors)")
        #expect(!errors.contains("NSCocoaErrorDomain") && !errors.contains("The operation could not be completed"), "\(errors)")
        #expect(!String(decoding: child.output, as: UTF8.self).contains("serving production"), "serve must not start")
    }

    @Test("serve --lookup without the pseudonym secret or the In-App Purchase key, or a lookup setting without --lookup, is a usage error saying what to set")
    func lookupNeedsItsSecrets() async throws {
        let setup = try ServeSetup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let base = ["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem", "--listen", "127.0.0.1:0"]
        let secret = ["RETENTION_SYNC_PSEUDONYM_SECRET": String(repeating: "ab", count: 32)]
        let cases: [(arguments: [String], environment: [String: String], says: String)] = [
            (base + ["--lookup-rate", "5"], [:], "give --lookup too"),
            (base + ["--lookup"], [:], "RETENTION_SYNC_PSEUDONYM_SECRET"),
            (base + ["--lookup", "--events", setup.directory.appendingPathComponent("events").path], secret, "RETENTION_SYNC_KEY_ID"),
            (base + ["--lookup", "--lookup-deadline", "700"], [:], "from 10 to 600 milliseconds"),
            (base + ["--lookup", "--lookup-endpoint", "http://apple.example/"], [:], "plain http:// is accepted only for loopback hosts"),
        ]
        for (arguments, environment, says) in cases {
            let console = CapturedConsole()
            let code = await CLI.run(arguments, context: CommandContext(console: console.console, environment: environment,
                                                                        currentDirectory: setup.directory))
            #expect(code == .usage, "\(arguments)")
            #expect(console.stderr.contains(says), "\(arguments): \(console.stderr)")
        }
    }

    @Test("serve without --root, with --tls-cert alone, or with --workers 0, is a usage error")
    func usageErrors() async throws {
        let directory = FileManager.default.temporaryDirectory
        for arguments in [["serve", "--env", "production", "--snapshot", "s.json"],
                          ["serve", "--env", "production", "--snapshot", "s.json", "--root", "r.pem", "--tls-cert", "c.pem"],
                          ["serve", "--env", "staging", "--root", "r.pem"],
                          ["serve", "--env", "production", "--snapshot", "s.json", "--root", "r.pem", "--workers", "0"]] {
            let console = CapturedConsole()
            let code = await CLI.run(arguments, context: CommandContext(console: console.console, environment: [:], currentDirectory: directory))
            #expect(code == .usage, "\(arguments)")
        }
    }
}

