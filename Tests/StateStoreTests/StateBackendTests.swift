import Foundation
import HTTPCore
import HTTPClient
import HTTPServer
import RetentionMessagingModels
import StateLocations
import StateStore
import Testing

/// The registry of backends: each scheme the grammar knows opens through exactly one backend, which
/// also names the root other data (an event store's `events/`) is written under.
@Suite("State backends")
struct StateBackendTests {
    struct NoNetwork: HTTPTransport {
        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
            throw HTTPError(.other, "no network in this test")
        }
    }

    let owner = StateOwner(bundleId: "com.example.app", appAppleId: 1, environment: .production)
    let root = URL(fileURLWithPath: "/")

    @Test("every scheme of the location grammar has exactly one registered backend")
    func everySchemeHasOneBackend() {
        for scheme in StateLocation.Scheme.allCases {
            #expect(StateStores.all.filter { $0.scheme == scheme }.count == 1, "\(scheme)")
        }
        #expect(StateStores.all.count == StateLocation.Scheme.allCases.count)
    }

    @Test("a prefix opens the environment's own document, and the prefix is the root for other data")
    func prefixAndRoot() throws {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-a-secret"]
        let prefix = try StateLocation.parse("s3://team-state/retention-sync", from: .commandLine(workingDirectory: root))
        let store = try StateStores.open(prefix, owner: owner, environment: environment, transport: NoNetwork())
        #expect(store.location == .s3(bucket: "team-state", key: "retention-sync/production.json"))
        #expect(StateStores.backend(for: prefix).root(of: prefix) == prefix)
        #expect(StateStores.backend(for: store.location).root(of: store.location).appending("events")
                == .s3(bucket: "team-state", key: "retention-sync/events"))

        let file = try StateLocation.parse("/srv/state/prod.json", from: .commandLine(workingDirectory: root))
        #expect(try StateStores.open(file, owner: owner, environment: [:], transport: NoNetwork()).location == file)
        #expect(StateStores.backend(for: file).root(of: file).scheme == .file)
    }

    @Test("one prefix may hold both environments; one document may not")
    func sharingRule() throws {
        let prefix = StateLocation.s3(bucket: "team-state", key: "apps/example")
        #expect(StateLocation.sharedDocument((.sandbox, prefix), (.production, prefix)) == nil)
        let document = StateLocation.s3(bucket: "team-state", key: "apps/example/state.json")
        #expect(StateLocation.sharedDocument((.sandbox, document), (.production, document)) == document)
        let sandboxInPrefix = StateLocation.s3(bucket: "team-state", key: "apps/example/sandbox.json")
        #expect(StateLocation.sharedDocument((.sandbox, prefix), (.production, sandboxInPrefix)) == sandboxInPrefix)
    }
}
