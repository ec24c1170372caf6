import Basics
import Emulator
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// One environment of an app against the emulator, with its snapshot store in a temp directory.
struct Harness {
    var directory: URL
    var environment: Environment
    var apple: EmulatedApple
    var api: RetentionMessagingClient
    var manifests: ManifestSet

    init(environment: Environment, apple: EmulatedApple = EmulatedApple(), directory: URL = Fixtures.temporaryDirectory()) {
        self.directory = directory
        self.environment = environment
        self.apple = apple
        api = apple.client(environment)
        manifests = Fixtures.manifests(directory: directory)
    }

    var state: EmulatorState { apple.state(environment) }

    func approveAll() { apple.emulator.approveAllPending(in: environment) }

    func desired() throws -> DesiredState { try Identities.derive(manifests, environment: environment) }

    func reconciler(api: (any RetentionMessagingAPI)? = nil) throws -> Reconciler {
        Reconciler(api: api ?? self.api, state: Reconciler.store(for: try desired()), clock: SystemClock())
    }

    func plan(_ options: PlanOptions = PlanOptions()) async throws -> PlanResult {
        try await reconciler().plan(try desired(), options: options)
    }

    @discardableResult
    func apply(_ options: PlanOptions = PlanOptions(), api: (any RetentionMessagingAPI)? = nil) async throws -> ApplyReport {
        let reconciler = try reconciler(api: api)
        return try await reconciler.apply(try await reconciler.plan(try desired(), options: options))
    }

    var store: SnapshotStore { SnapshotStore(url: directory.appendingPathComponent("snapshots/\(environment.rawValue).json")) }

    func published() throws -> RuntimeSnapshot? { try store.read() }

    /// The published snapshot's own bytes (the state document around it also holds times).
    func publishedBytes() -> Data? { try? published()?.encoded() }
}
