import Crypto
import EventStore
import Foundation
import HTTPClient
import Operations
import RetentionMessagingModels
import StateLocations
import StateStore
@testable import EngineTestSupport
import Testing
import TestSupport

@Suite("Customer facts beside an S3 state store", .serialized)
struct S3FactsTests {
    static let keyId = "5eed0002"

    static func pseudonym(_ index: Int) -> String { Digest.sha256Hex(Array("customer \(index)".utf8)) }

    static func facts(_ storefront: String, customers: Int) -> [String: CustomerFacts] {
        Dictionary(uniqueKeysWithValues: (0..<customers).map { index in
            (pseudonym(index), CustomerFacts(storefront: storefront, transactionAsOf: 1_795_000_000_000))
        })
    }

    @Test("the reconcile job publishes tables to S3 with apply's permissions; a reader gets the current one whole and checked; older tables are kept with a note saying what would remove them")
    func publishReadAndPrune() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let root = StateLocation.s3(bucket: server.bucket, key: "apps/stillpoint")
        let store = try S3StateBackend().objectStore(at: root, environment: server.environment(server.writer), transport: { CurlHTTPClient() })
        var pointers: [FactsPointer] = []
        var notes: [String?] = []
        for (round, storefront) in ["DEU", "USA", "JPN"].enumerated() {
            let header = FactsTable.Header(bundleId: "com.example.app", environment: "production", keyId: Self.keyId,
                                           count: 0, newestFact: 1_795_000_000_000)
            let published = try await FactsBuild.publish(Self.facts(storefront, customers: 50 + round), header: header,
                                                         builtAt: 1_795_000_000_000 + Int64(round), to: store)
            pointers.append(published.pointer)
            notes.append(published.kept)
        }
        // Apply's identity may put and get, not delete: the third publish keeps the first table and says so.
        #expect(notes[0] == nil && notes[1] == nil)
        #expect(notes[2]?.contains("1 older table(s)") == true && notes[2]?.contains("s3:DeleteObject") == true, "\(notes)")
        let reader = try S3StateBackend().objectStore(at: root, environment: server.environment(server.reader), transport: { CurlHTTPClient() })
        let read = try #require(try await FactsPointer.current(in: reader, environment: "production",
                                                                expecting: ("com.example.app", "production", Self.keyId)))
        #expect(read.pointer == pointers[2])
        #expect(read.table.count == 52)
        #expect(read.table.facts(for: Self.pseudonym(1))?.storefront == "JPN")
        let tables = try await store.list(prefix: FactsPointer.folder(environment: "production") + "/table-")
        #expect(Set(tables) == Set(pointers.map(\.table)))

        // A reader expecting another App refuses the table.
        await #expect(throws: FactsTable.Refusal.self) {
            _ = try await FactsPointer.current(in: reader, environment: "production", expecting: ("com.example.other", "production", Self.keyId))
        }
    }
}
