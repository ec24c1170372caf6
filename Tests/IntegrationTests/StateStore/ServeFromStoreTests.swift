import Foundation
import RealtimeServer
import Runtime
import StateLocations
import StateStore
@testable import EngineTestSupport
import Testing
import TestSupport

/// `serve` reads the snapshot that `apply` published into the state store, and a later publish
/// reaches it at the next poll — with S3 (moto on loopback) as on a CI runner and a server.
private typealias Support = StateStoreTestSupport

@Suite("Serving from the state store", .serialized)
struct ServeFromStoreTests {
    @Test("serve reads the published snapshot from S3, sees 'unchanged' cheaply, and picks up the next publish")
    func picksUpPublishFromS3() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let location = try StateLocation.parse("s3://\(server.bucket)/apps/example", relativeTo: URL(fileURLWithPath: "/"))
        let apply = try StateStores.open(location, owner: Support.sandbox, environment: server.environment(server.writer),
                                         transport: MotoServer.client)
        let first = try await apply.write(try Support.document(for: Support.sandbox, message: "first"), condition: .createOnly)
        let source = try StateSnapshotSource(location: location, owner: Support.sandbox,
                                             environment: server.environment(server.reader), transport: MotoServer.client)

        // fetch blocks its thread (serve calls it from its polling thread), so it runs on one here.
        let initial = try #require(try await onOwnThread { try source.fetch(knownVersion: nil) })
        #expect(try RuntimeSnapshot.load(from: initial.data).rules.first?.response.message == "first")
        #expect(initial.version == first.rawValue)
        let unchanged = try await onOwnThread { try source.fetch(knownVersion: initial.version) }
        #expect(unchanged == nil)

        _ = try await apply.write(try Support.document(for: Support.sandbox, message: "second"), condition: .ifMatch(first))
        let next = try #require(try await onOwnThread { try source.fetch(knownVersion: initial.version) })
        #expect(try RuntimeSnapshot.load(from: next.data).rules.first?.response.message == "second")
    }

    @Test("an empty store is an error that says to publish first, never an empty snapshot")
    func emptyStoreIsAnError() async throws {
        let directory = try Support.temporaryDirectory()
        let location = try StateLocation.parse(directory.appendingPathComponent("state").path, relativeTo: directory)
        let source = try StateSnapshotSource(location: location, owner: Support.sandbox, environment: [:],
                                             transport: MotoServer.client)
        await #expect(throws: SnapshotSourceError.self) { try await onOwnThread { try source.fetch(knownVersion: nil) } }
    }
}
