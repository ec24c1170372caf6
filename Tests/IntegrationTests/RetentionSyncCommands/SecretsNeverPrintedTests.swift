import CLIKit
import Crypto
import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

/// Everything a run printed, logged or threw, in one place to search.
final class Transcript: Sendable {
    private let text = Locked("")
    func append(_ line: String) { text.withLock { $0 += line + "\n" } }
    var all: String { text.value }
}

@Suite("Secrets never printed")
struct SecretsNeverPrintedTests {
    @Test("no output, log line or error of the client or the emulator command contains the key, a token or an Authorization header")
    func nothingLeaks() async throws {
        let app = CommandTestApp()
        let transcript = Transcript()
        let pemLines = app.key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)

        let running = try await RunningEmulatorCommand.start(["--verbose", "--environment", "production", "--server-errors", "0.2", "--seed", "3"],
                                                             environment: app.environment)
        let client = running.client(.production, credentials: app.credentials,
                                    retry: RetryPolicy(maxAttempts: 6, baseDelay: 0.001, maxDelay: 0.005))
        client.onLog(transcript.append)
        client.onWait { seconds, reason in transcript.append("wait \(seconds): \(reason)") }

        let message = "00000000-0000-4000-8000-000000000001"
        let body = UploadMessageRequestBody(header: "Stay", body: "It gets better.")
        let calls: [@Sendable () async throws -> Void] = [
            { try await client.uploadMessage(identifier: message, body: body) },
            { try await client.uploadMessage(identifier: message, body: body) },
            { try await client.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: message) },
            { try await client.configureDefaultMessage(productId: "com.example.monthly", locale: "en_US", messageIdentifier: message) },
            { _ = try await client.getMessageList() },
            { try await client.deleteImage(identifier: message) },
            { try await client.configureRealtimeURL("https://retention.example.com") },
            { _ = try await client.initiatePerformanceTest(originalTransactionId: "1") },
        ]
        for call in calls {
            if let error = await apiError(call) {
                transcript.append(error.description)
                transcript.append(String(reflecting: error))
                transcript.append(error.localizedDescription)
            }
        }

        // A client whose key the emulator does not know: 401s.
        let stranger = CommandTestApp()
        // Retries carry it past injected 500s to the 401, whatever the seed draws.
        let strangerClient = running.client(.production, credentials: stranger.credentials,
                                            retry: RetryPolicy(maxAttempts: 12, baseDelay: 0.001, maxDelay: 0.005))
        strangerClient.onLog(transcript.append)
        if let error = await apiError({ _ = try await strangerClient.getMessageList() }) {
            transcript.append(error.description)
            #expect(error.status == 401)
        }

        // The objects themselves, printed and dumped.
        transcript.append(String(describing: app.credentials))
        transcript.append(String(reflecting: app.credentials))
        var dumped = ""
        dump(app.credentials, to: &dumped)
        dump(client, to: &dumped)
        transcript.append(dumped)
        #expect(try await running.stop() == .success)
        transcript.append(running.captured.stdout)
        transcript.append(running.captured.stderr)

        // Error paths of the credentials and of the command: a malformed key in each form.
        var brokenEnvironment = app.environment
        brokenEnvironment["RETENTION_SYNC_PRIVATE_KEY"] = app.key.pkcs8PEM.replacingOccurrences(of: "-----END", with: "-----XEND")
        do {
            _ = try Credentials.fromEnvironment(brokenEnvironment, bundleId: "com.example.retention")
            Issue.record("a broken key was accepted")
        } catch {
            transcript.append(String(describing: error))
        }
        let refused = try await RunningEmulatorCommand.start(["--verbose"], environment: brokenEnvironment)
        #expect(await refused.finished() != .success)
        transcript.append(refused.captured.stdout)
        transcript.append(refused.captured.stderr)

        let all = transcript.all
        #expect(all.contains("→ PUT /inApps/v1/messaging/message/\(message)"))
        #expect(all.contains("production PUT /inApps/v1/messaging/message/\(message) → 200"))
        #expect(all.contains("401 (signature does not verify with the configured key)"))
        #expect(all.contains("RETENTION_SYNC_PRIVATE_KEY"))
        for line in pemLines { #expect(!all.contains(line)) }
        #expect(!all.contains("PRIVATE KEY-----\n"))
        #expect(!all.contains("eyJ"))
        #expect(!all.localizedCaseInsensitiveContains("Authorization"))
        #expect(!all.contains("Bearer"))
    }
}
