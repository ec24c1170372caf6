import Emulator
import Foundation
import Manifests
import Reconciler
import RetentionMessagingModels
import StateStore
import Testing

/// What a plan changes in the messages, localization by localization, for `plan --preview`: before
/// is the main branch's recorded version, after is what the manifests derive.
@Suite("The message localizations a plan changes")
struct LocalizationChangesTests {
    /// Sandbox applied from the fixtures' manifests, as the main branch leaves it.
    static func applied() async throws -> Harness {
        let harness = Harness(environment: .sandbox)
        try await harness.apply()
        return harness
    }

    @Test("right after an apply of the main branch nothing has changed")
    func nothingAfterApply() async throws {
        let harness = try await Self.applied()
        #expect(try await harness.plan().localizationChanges.isEmpty)
    }

    @Test("an edited text is changed: the recorded body before, the derived one after, the field that differs")
    func editedText() async throws {
        var harness = try await Self.applied()
        let old = try #require(try harness.desired().messages.first { $0.name == "winback" && $0.locale == "de-DE" })
        harness.manifests = Fixtures.manifests(directory: harness.directory, winbackDE: "Neu bei uns")
        let changes = try await harness.plan().localizationChanges
        #expect(changes.map { "\($0.name) \($0.locale) \($0.kind.rawValue)" } == ["winback de-DE changed"])
        let change = try #require(changes.first)
        #expect(change.before?.identifier == old.identifier)
        #expect(change.before?.body?.body == "Wir vermissen dich")
        #expect(change.after?.body?.body == "Neu bei uns")
        #expect(change.fields == [FieldChange(field: "body", before: "Wir vermissen dich", after: "Neu bei uns")])
        #expect(change.upload == .ready)
    }

    @Test("a version Apple no longer holds is uploaded again, with the same text before and after")
    func uploadedAgain() async throws {
        let harness = try await Self.applied()
        let winback = try #require(try harness.desired().messages.first { $0.name == "winback" && $0.locale == "en-US" })
        var state = harness.apple.emulator.state(of: .sandbox)
        #expect(state.messages.removeValue(forKey: winback.identifier) != nil)
        harness.apple.emulator.restore(state, in: .sandbox)
        let changes = try await harness.plan().localizationChanges
        #expect(changes.map { "\($0.name) \($0.locale) \($0.kind.rawValue)" } == ["winback en-US uploaded_again"])
        #expect(changes.first?.before?.body == changes.first?.after?.body && changes.first?.fields == [])
    }

    @Test("without the main branch's marks (a state written before in_main), before is the version the plan's text changes replace, and nothing is taken for removed")
    func withoutMainMarks() async throws {
        var harness = try await Self.applied()
        harness.manifests = Fixtures.manifests(directory: harness.directory, winbackDE: "Neu bei uns")
        harness.manifests.messages.removeAll { $0.name == "offer" }
        harness.manifests.flows = []
        let planned = try await harness.plan()
        #expect(planned.localizationChanges.map { "\($0.name) \($0.locale) \($0.kind.rawValue)" }
                == ["offer de-DE removed", "offer en-US removed", "winback de-DE changed"])
        var document = try #require(planned.remote.state?.document)
        for index in document.content.indices { document.content[index].inMain = nil }
        let changes = LocalizationChange.list(plan: planned.plan, desired: planned.desired, document: document)
        #expect(changes.map { "\($0.name) \($0.locale) \($0.kind.rawValue)" } == ["winback de-DE changed"])
        #expect(changes.first?.before?.body?.body == "Wir vermissen dich")
    }
}
