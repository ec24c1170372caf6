import CLIKit
@testable import CommandTestSupport
import Foundation
import RetentionMessagingModels
import Testing

/// A plan that reads many defaults says what the read costs before the first call, as import does;
/// once the state vouches for the defaults, the next plan reads only its window and says nothing.
@Suite("The cost of a read, up front")
struct ReadEstimateTests {
    @Test("a first plan of 50 pairs announces its 53 calls; after an apply the window of 10 is read quietly")
    func longReadsAreAnnounced() async throws {
        let harness = try CommandHarness()
        let products = (1...25).map { "com.example.stillpoint.p\($0)" }
        try ImportCommandTests.adoptingApp(harness, products: products, locales: ["en-US", "de-DE"])
        try """
            apiVersion: retention-sync/v1
            kind: Message
            name: stay-calm
            localizations:
              en-US: { header: "Stay a little longer", body: "Ten minutes a day still counts." }
              de-DE: { header: "Bleib noch ein wenig", body: "Zehn Minuten am Tag zählen." }
            ---
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - { products: "*", locales: "*", message: stay-calm }
            """.write(to: harness.file("manifests/messages.yaml"), atomically: true, encoding: .utf8)
        let first = await harness.run(["plan", "--env", "sandbox"])
        #expect(first.code == .success, "\(first.stdout)\(first.stderr)")
        #expect(first.stderr.contains("Reading sandbox: about 53 calls (the message and image lists, 50 defaults, the realtime URL) before the plan; "
                                      + "Apple allows 360 an hour in sandbox, so they fit in one hour's budget."), "\(first.stderr)")
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let next = await harness.run(["plan", "--env", "sandbox"])
        #expect(next.stdout.contains("No changes."), "\(next.stdout)")
        #expect(!next.stderr.contains("Reading sandbox:"), "\(next.stderr)")
        #expect(next.stdout.contains("Read sandbox with 13 API calls."), "\(next.stdout)")
    }
}
