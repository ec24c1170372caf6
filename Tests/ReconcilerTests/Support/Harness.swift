import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import Runtime

/// One environment of the example app against an API, with its snapshot store in a temp directory.
struct Harness {
    var directory: URL
    var environment: Environment
    var api: any RetentionMessagingAPI
    var manifests: ManifestSet

    init(environment: Environment, api: (any RetentionMessagingAPI)? = nil, directory: URL = Fixtures.temporaryDirectory()) {
        self.directory = directory
        self.environment = environment
        self.api = api ?? FakeRetentionAPI(environment: environment)
        manifests = Fixtures.manifests(directory: directory)
    }

    var fake: FakeRetentionAPI { api as! FakeRetentionAPI }

    func desired() throws -> DesiredState { try Identities.derive(manifests, environment: environment) }

    func reconciler(api: (any RetentionMessagingAPI)? = nil) throws -> Reconciler {
        Reconciler(api: api ?? self.api, store: Reconciler.store(for: try desired()))
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

    func publishedBytes() -> Data? { try? Data(contentsOf: store.url) }
}
