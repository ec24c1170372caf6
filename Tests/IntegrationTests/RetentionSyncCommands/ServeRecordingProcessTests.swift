import Crypto
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessagingModels
import Runtime
import Synchronization
@testable import CommandTestSupport
import Testing
import TestSupport

/// `retention-sync serve` recording decisions, as a process: what SIGTERM under load keeps.
@Suite("serve records decisions, as a process")
struct ServeRecordingProcessTests {
    static let secret = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
    static let messageId = "00000000-0000-5000-8000-000000000001"

    final class Answered: Sendable {
        let requestIds = Mutex<[String]>([])
        let transactions = Mutex<[String]>([])
        let stop = Atomic(false)
    }

    @Test("SIGTERM in the middle of load: every answered request is in the events, written by the flush at exit; no raw transaction id anywhere")
    func sigtermUnderLoadLosesNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-recording-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try AppleStyleSigningChain()
        try Data(chain.root.pem.utf8).write(to: directory.appendingPathComponent("root.pem"))
        let snapshot = try RuntimeSnapshot(
            bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production, localeFallbacks: [:],
            rules: [SnapshotRule(id: "cancel/everyone", version: "0123456789abcdef", match: SnapshotMatch(),
                                 response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": Self.messageId]))]).sealed()
        try snapshot.encoded().write(to: directory.appendingPathComponent("snapshot.json"))
        // A flush interval far longer than the test: only the flush at SIGTERM can store the events.
        let child = try ChildProcess(["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0", "--events", "events-root", "--event-spool", "spool", "--flush-interval", "300"],
                                     in: directory, environment: ["RETENTION_SYNC_PSEUDONYM_SECRET": Self.secret], name: "recording")
        let prefix = "serving production on "
        let line = try #require(await child.line(startingWith: prefix, within: 20), "serve did not start: \(child.errors)")
        let url = try #require(URL(string: String(line.dropFirst(prefix.count))))
        #expect(String(decoding: child.output, as: UTF8.self).contains("recording decisions to "))

        let answered = Answered()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let client = CurlHTTPClient()
                    var index = 0
                    // Bounded: at most 2,000 requests a worker, and it stops once the server is gone.
                    while index < 2_000, !answered.stop.load(ordering: .relaxed) {
                        index += 1
                        let transaction = String(2_000_000_000_000_000 + worker * 10_000 + index)
                        let requestId = UUID().uuidString.lowercased()
                        let body = DecodedRealtimeRequestBody(originalTransactionId: transaction, appAppleId: 1_234_567_890,
                                                              productId: "com.example.monthly", userLocale: "en-US", requestIdentifier: requestId,
                                                              environment: "Production", signedDate: Int64(Date().timeIntervalSince1970 * 1000))
                        guard let signed = try? chain.sign(payloadJSON: Array(try CanonicalJSON.encode(body))),
                              let data = try? JSONSerialization.data(withJSONObject: ["signedPayload": signed]) else { return }
                        guard let response = try? await client.send(HTTPRequest(method: "POST", url: url, body: data)) else { return }
                        if response.status == 200 {
                            answered.requestIds.withLock { $0.append(requestId) }
                            answered.transactions.withLock { $0.append(transaction) }
                        }
                    }
                }
            }
            group.addTask {
                // Let load build, then SIGTERM while the workers are still sending.
                for _ in 0..<200 where answered.requestIds.withLock({ $0.count }) < 150 { try? await Task.sleep(for: .milliseconds(10)) }
                kill(child.process.processIdentifier, SIGTERM)
                _ = await child.finish(within: 30)
                answered.stop.store(true, ordering: .relaxed)
            }
        }
        #expect(child.process.terminationStatus == 0)
        let requestIds = answered.requestIds.withLock { $0 }
        #expect(requestIds.count >= 150)

        var recorded: [String: Int] = [:]
        var everything = ""
        let walker = FileManager.default.enumerator(atPath: directory.path)
        while let relative = walker?.nextObject() as? String {
            let data = FileManager.default.contents(atPath: directory.appendingPathComponent(relative).path) ?? Data()
            everything += String(decoding: data, as: UTF8.self)
            guard relative.hasPrefix("events-root/events/v1/decisions/"), relative.hasSuffix(".ndjson") else { continue }
            for line in data.split(separator: 0x0A) {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
                recorded[object["requestIdentifier"] as? String ?? "", default: 0] += 1
            }
        }
        #expect(requestIds.allSatisfy { recorded[$0] == 1 }, "\(requestIds.filter { recorded[$0] != 1 }.count) answered requests are not recorded once")
        let output = String(decoding: child.output, as: UTF8.self)
        #expect(output.contains("events: \(recorded.values.reduce(0, +)) recorded, \(recorded.values.reduce(0, +)) stored"), "\(output)")
        // Nothing is left in the spool, and no raw transaction id is in any file (events, spool, stdout, the request log).
        #expect(!everything.isEmpty)
        for transaction in answered.transactions.withLock({ $0 }).prefix(300) { #expect(!everything.contains(transaction)) }
        let spool = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("spool/events/v1/decisions").path)) ?? []
        #expect(spool.allSatisfy { !$0.hasSuffix(".ndjson") })
    }

    @Test("without the pseudonym secret, serve says at start that it records nothing, and answers as before")
    func withoutSecretSaysSo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-norecord-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try AppleStyleSigningChain()
        try Data(chain.root.pem.utf8).write(to: directory.appendingPathComponent("root.pem"))
        let snapshot = try RuntimeSnapshot(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production,
                                           localeFallbacks: [:], rules: []).sealed()
        try snapshot.encoded().write(to: directory.appendingPathComponent("snapshot.json"))
        let child = try ChildProcess(["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0"], in: directory, environment: [:], name: "plain")
        _ = try #require(await child.line(startingWith: "serving production on ", within: 20), "serve did not start: \(child.errors)")
        #expect(child.errors.contains("RETENTION_SYNC_PSEUDONYM_SECRET is not set: decisions are not recorded"))
        kill(child.process.processIdentifier, SIGTERM)
        #expect(await child.finish(within: 30) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("events").path))
    }
}
