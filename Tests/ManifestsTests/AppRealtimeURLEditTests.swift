import Foundation
import Manifests
import RetentionMessagingModels
import Testing

/// Import declares Apple's realtime URL in the App's file by inserting two lines; every other byte stays.
@Suite("Declaring a realtime URL in the App manifest")
struct AppRealtimeURLEditTests {
    static let url = "https://rm.vendor.example/apple/lumen/production"
    static let comment = "Imported by 'retention-sync import --env production' on 2026-11-28: Apple's realtime URL then."

    static func edit(_ text: String) -> Result<String, AppRealtimeURLEdit.EditRefusal> {
        AppRealtimeURLEdit.declaring(url, environment: .production, comment: comment, in: text, file: "manifests/app.yaml")
    }

    @Test("a block mapping keeps its comments and order; the key goes first, under a comment")
    func blockMapping() throws {
        let text = """
            # The app, as the team wrote it.
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.acme.lumen
            environments:
              sandbox:
                realtimeURL: https://retention.acme.example/apple/sandbox   # ours
              production:
                # state in S3
                stateStore: s3://acme-state/lumen/production
            products:
              - id: com.acme.lumen.basic.monthly
                locales: [en-US]

            """
        let edited = try Self.edit(text).get()
        #expect(edited == text.replacingOccurrences(of: "    stateStore: s3://", with: """
                # \(Self.comment)
                realtimeURL: \(Self.url)
                stateStore: s3://
            """))
    }

    @Test("a flow mapping gets the key inside its braces and the comment above its line")
    func flowMapping() throws {
        let text = "apiVersion: retention-sync/v1\nkind: App\nbundleId: com.acme.lumen\nenvironments:\n  production: {}\nproducts: []\n"
        let edited = try Self.edit(text).get()
        #expect(edited == "apiVersion: retention-sync/v1\nkind: App\nbundleId: com.acme.lumen\nenvironments:\n  # \(Self.comment)\n"
                + "  production: { realtimeURL: \(Self.url) }\nproducts: []\n")
    }

    @Test("an App written in a form the edit cannot change safely is left as it is, with the reason")
    func refusals() {
        let flowEnvironments = "apiVersion: retention-sync/v1\nkind: App\nbundleId: a.b\nenvironments: { production: { stateStore: x } }\nproducts: []\n"
        #expect(throws: AppRealtimeURLEdit.EditRefusal.self) { try Self.edit(flowEnvironments).get() }
        let declared = "apiVersion: retention-sync/v1\nkind: App\nbundleId: a.b\nenvironments:\n  production: { realtimeURL: https://x.example }\nproducts: []\n"
        #expect(throws: AppRealtimeURLEdit.EditRefusal.self) { try Self.edit(declared).get() }
    }
}
