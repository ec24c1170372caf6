import CLIKit
import Crypto
import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync id")
struct IdCommandTests {
    @Test("every identifier id prints is the UUIDv5 of the name string it prints, offline")
    func identifiersRecompute() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["id", "--format", "json"])
        #expect(run.code == .success)
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let namespace = try #require(listing["namespace"] as? String)
        #expect(namespace == "3d4bd7a5-9c3e-4a55-8f0e-2b6f6b1c9e71")
        let environments = try #require(listing["environments"] as? [[String: Any]])
        #expect(environments.map { $0["environment"] as? String } == ["sandbox", "production"])
        var count = 0
        for environment in environments {
            for entry in (environment["images"] as? [[String: Any]] ?? []) + (environment["messages"] as? [[String: Any]] ?? []) {
                let name = try #require(entry["uuid5_name"] as? String)
                #expect(entry["identifier"] as? String == (try UUIDv5.make(namespace: namespace, name: name)))
                count += 1
            }
        }
        #expect(count == 2 * (4 + 12))
        #expect(harness.emulator.requestCount(in: .sandbox) == 0)
    }

    @Test("the text listing names each message's logical name, locale and content version")
    func textListing() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["id", "--env", "sandbox"])
        #expect(run.stdout.contains("sandbox: 4 images, 12 messages"))
        #expect(run.stdout.contains("message  before-you-go (en-US) product * version "))
        #expect(run.stdout.contains("uuid5 name: com.example.stillpoint:sandbox:*:en-US:before-you-go:"))
    }
}
