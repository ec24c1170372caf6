import EventStore
import Foundation
import HTTPClient
import HTTPCore
import StateLocations
import StateStore
import Synchronization
@testable import EngineTestSupport
import Testing
import TestSupport

@Suite("Events beside an S3 state store", .serialized)
struct S3EventStoreTests {
    @Test("segments go up under the state's prefix, list in order, and read back byte for byte")
    func segmentsRoundTrip() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let root = StateLocation.s3(bucket: server.bucket, key: "apps/stillpoint")
        let store = try S3StateBackend().objectStore(at: root, environment: server.environment(server.writer),
                                                     transport: { CurlHTTPClient() })
        #expect(store.location == "s3://\(server.bucket)/apps/stillpoint")
        let recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                     settings: .init(writerId: "replica-s3", spool: try temporaryFolder("retention-sync-s3-spool"), flushInterval: 0.05))
        recorder.start()
        for index in 0..<120 { recorder.record(decision(index, at: 1_795_000_000_000 + Int64(index) * 60_000)) }
        let counters = await recorder.close()
        #expect(counters.stored["decisions"] == 120)
        let keys = try await store.list(prefix: "events/v1/decisions/")
        #expect(keys.count >= 3)
        #expect(keys.allSatisfy { $0.hasPrefix("events/v1/decisions/environment=sandbox/date=2026-") && $0.hasSuffix(".ndjson") })
        var lines = 0
        for key in keys {
            let data = try #require(try await store.get(key))
            lines += data.filter { $0 == 0x0A }.count
        }
        #expect(lines == 120)
        #expect(try await store.get("events/v1/missing.ndjson") == nil)
        // A reader without write permission still lists and reads.
        let reader = try S3StateBackend().objectStore(at: root, environment: server.environment(server.reader), transport: { CurlHTTPClient() })
        #expect(try await reader.list(prefix: "events/v1/").count == keys.count)
        // Listing pages through continuation tokens, and takes prefixes with the layout's '=' signs.
        let s3 = try #require(store as? S3ObjectStore)
        #expect(try await s3.list(prefix: "events/v1/", pageSize: 2) == keys)
        #expect(try await store.list(prefix: "events/v1/decisions/environment=sandbox/") == keys)
    }

    @Test("serve's recorder stores to S3 from its own thread, with no task and no thread of Swift's pool")
    func recorderNeedsNoPoolThread() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let root = StateLocation.s3(bucket: server.bucket, key: "apps/stillpoint")
        // The S3 store's only transport answers on libcurl's threads and never through a task: a
        // put that took the asynchronous path would wait for ever (bounded below), as it would
        // when every thread of the pool is busy answering requests.
        let transport = WaitingOnlyTransport(CurlHTTPClient())
        let store = try S3StateBackend().objectStore(at: root, environment: server.environment(server.writer),
                                                     transport: { transport })
        let recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                     settings: .init(writerId: "replica-thread", spool: try temporaryFolder("retention-sync-s3-spool"), flushInterval: 0.05))
        recorder.start()
        for index in 0..<10 { recorder.record(decision(index, at: 1_795_000_000_000 + Int64(index) * 60_000)) }
        let counters = await recorder.close()
        #expect(counters.stored["decisions"] == 10)
        #expect(counters.spooledSegments == 0)
        #expect(transport.asynchronousSends.withLock { $0 } == 0)
        let reader = try S3StateBackend().objectStore(at: root, environment: server.environment(server.reader), transport: { CurlHTTPClient() })
        var lines = 0
        for key in try await reader.list(prefix: "events/v1/decisions/") {
            lines += try #require(try await reader.get(key)).filter { $0 == 0x0A }.count
        }
        #expect(lines == 10)
    }
}

/// A transport that answers only callers that wait on a thread of their own; an asynchronous send
/// is counted and refused, so a sink that took that path would spool instead of storing.
final class WaitingOnlyTransport: HTTPTransport {
    let base: CurlHTTPClient
    let asynchronousSends = Mutex(0)

    init(_ base: CurlHTTPClient) { self.base = base }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        asynchronousSends.withLock { $0 += 1 }
        throw HTTPError(.other, "this transport answers only sendWaiting")
    }

    func sendWaiting(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> { base.sendWaiting(request) }
}
