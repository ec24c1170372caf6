import Emulator
import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Synchronization
import Testing

/// The client, with the answers Apple gives to someone else's change or to an account without access.
final class AnsweringAPI: RetentionMessagingAPI {
    let base: RetentionMessagingClient
    let deleteAnswer: RetentionMessagingError?
    let realtimeAnswer: RetentionMessagingError?

    init(_ base: RetentionMessagingClient, deleteAnswer: RetentionMessagingError? = nil, realtimeAnswer: RetentionMessagingError? = nil) {
        self.base = base
        self.deleteAnswer = deleteAnswer
        self.realtimeAnswer = realtimeAnswer
    }

    var environment: Environment { base.environment }
    var requestCounts: RequestCounts { base.requestCounts }
    func uploadMessage(identifier: String, body: UploadMessageRequestBody) async throws { try await base.uploadMessage(identifier: identifier, body: body) }
    func deleteMessage(identifier: String) async throws {
        if let deleteAnswer { throw deleteAnswer }
        try await base.deleteMessage(identifier: identifier)
    }
    func getMessageList() async throws -> GetMessageListResponse { try await base.getMessageList() }
    func uploadImage(identifier: String, size: ImageSize, png: [UInt8]) async throws { try await base.uploadImage(identifier: identifier, size: size, png: png) }
    func deleteImage(identifier: String) async throws { try await base.deleteImage(identifier: identifier) }
    func getImageList() async throws -> GetImageListResponse { try await base.getImageList() }
    func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws {
        try await base.configureDefaultMessage(productId: productId, locale: locale, messageIdentifier: messageIdentifier)
    }
    func getDefaultMessage(productId: String, locale: String) async throws -> DefaultConfigurationResponse? {
        try await base.getDefaultMessage(productId: productId, locale: locale)
    }
    func deleteDefaultMessage(productId: String, locale: String) async throws { try await base.deleteDefaultMessage(productId: productId, locale: locale) }
    func configureRealtimeURL(_ url: String) async throws {
        if let realtimeAnswer { throw realtimeAnswer }
        try await base.configureRealtimeURL(url)
    }
    func getRealtimeURL() async throws -> String? { try await base.getRealtimeURL() }
    func deleteRealtimeURL() async throws { try await base.deleteRealtimeURL() }
}

@Suite("Applying when Apple's answer is not the usual one")
struct ApplyEdgeTests {
    @Test("pruning a message someone already deleted counts as done")
    func pruningAnAlreadyDeletedMessage() async throws {
        let harness = Harness(environment: .sandbox)
        try await harness.apply()
        let stray = "0f0e0d0c-0b0a-4909-8807-060504030201"
        try await harness.api.uploadMessage(identifier: stray, body: UploadMessageRequestBody(header: "Stray", body: "By hand"))
        let planned = try await harness.plan(PlanOptions(prune: true))
        #expect(planned.plan.action("delete_message:\(stray)")?.state == .ready)

        // Apple answers 404 4040015: another job (or a person) deleted it between plan and apply.
        let gone = AnsweringAPI(harness.api, deleteAnswer: .api(status: 404, errorCode: AppleErrorCode.messageNotFound, errorMessage: "Message not found."))
        let report = try await harness.reconciler(api: gone).apply(planned)
        #expect(report.completed)
        let result = try #require(report.results.first { $0.id == "delete_message:\(stray)" })
        #expect(result.outcome == .alreadyDone)
        #expect(result.detail == "the message was already gone")
    }

    @Test("setting the realtime URL without API access stops with how to request access, never 'not found'")
    func realtimeURLWithoutAccess() async throws {
        let harness = Harness(environment: .sandbox)
        let denied = AnsweringAPI(harness.api, realtimeAnswer: .noAPIAccess(endpoint: "PUT /realtime/url"))
        let reconciler = try harness.reconciler(api: denied)
        let planned = try await reconciler.plan(try harness.desired())
        do {
            _ = try await reconciler.apply(planned)
            Issue.record("the apply should stop at the realtime URL")
        } catch {
            #expect(error.message.contains("request access to the Retention Messaging API"))
            #expect(!error.message.lowercased().contains("not found"))
            #expect(!error.message.contains("run apply again"))
            #expect(error.report.results.last?.kind == .setRealtimeURL)
        }
    }

    @Test("an apply asked to stop ends before the next action, and the next apply finishes without repeating an upload")
    func stoppingBetweenActions() async throws {
        let harness = Harness(environment: .sandbox)
        let reconciler = try harness.reconciler()
        let planned = try await reconciler.plan(try harness.desired())
        let finished = Mutex(0)
        let first = try await reconciler.apply(planned, progress: { event in
            if case .finished = event { finished.withLock { $0 += 1 } }
        }, shouldStop: { finished.withLock { $0 } >= 5 ? .maxDuration : nil })
        #expect(!first.completed)
        #expect(first.stopped == .maxDuration)
        #expect(first.results.count == 5)
        #expect(first.remaining == planned.plan.actions.count - 5)

        let second = try await harness.apply()
        #expect(second.completed)
        let firstDone = Set(first.results.filter { $0.outcome == .done }.map(\.id))
        #expect(second.results.allSatisfy { !firstDone.contains($0.id) })
        #expect(second.count(.alreadyDone) == 0)
        #expect(try await harness.plan().plan.converged)
    }
}
