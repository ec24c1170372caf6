import Basics
import Foundation
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
@testable import EngineTestSupport
import Testing

@Suite("State store locations")
struct StateLocationTests {
    let root = URL(fileURLWithPath: "/")

    @Test("s3://bucket/prefix names a prefix holding one document per environment; .json names the document")
    func s3Locations() throws {
        let prefix = try StateLocation.parse("s3://team-state/retention-sync/", relativeTo: root)
        #expect(prefix == .s3(bucket: "team-state", key: "retention-sync"))
        #expect(prefix.document(for: .production) == .s3(bucket: "team-state", key: "retention-sync/production.json"))
        #expect(try StateLocation.parse("s3://team-state", relativeTo: root).document(for: .sandbox).description == "s3://team-state/sandbox.json")
        let exact = try StateLocation.parse("s3://team-state/prod/state.json", relativeTo: root)
        #expect(exact.document(for: .sandbox) == exact)
    }

    @Test("unusable locations are refused with the reason", arguments: [
        ("s3://", "names no bucket"),
        ("s3://Team_State/x", "is not a bucket name"),
        ("s3://team-state/a/../b", "'..' part"),
        ("s3://team-state/a b", "only letters, digits"),
        ("gs://team-state/x", "uses 'gs://'"),
        ("", "is empty"),
    ])
    func invalidLocations(text: String, reason: String) {
        let error = #expect(throws: StateLocationError.self) { try StateLocation.parse(text, relativeTo: root) }
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "no error")")
    }

    @Test("a manifest's relative path resolves inside the manifest directory; ../ and symlinks out are refused")
    func confinedPaths() throws {
        let directory = try StateStoreTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifests = directory.appendingPathComponent("manifests")
        let elsewhere = directory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: manifests.path + "/out", withDestinationPath: elsewhere.path)

        let inside = try StateLocation.parse(".retention-sync/state.json", relativeTo: manifests, confinedTo: manifests)
        #expect(inside == .file(path: manifests.path + "/.retention-sync/state.json"))

        for escaping in ["../elsewhere/state.json", "out/state.json", "out/new/deeper/state.json", elsewhere.path + "/x.json", "."] {
            let error = #expect(throws: StateLocationError.self) {
                try StateLocation.parse(escaping, relativeTo: manifests, confinedTo: manifests)
            }
            #expect(error?.reason.contains("outside the manifest directory") == true, "\(escaping)")
        }
        // On the command line the user may point anywhere; symlinks are still resolved.
        #expect(try StateLocation.parse("out/state.json", relativeTo: manifests) == .file(path: elsewhere.path + "/state.json"))
        #expect(try StateLocation.parse("file://" + elsewhere.path + "/s.json", relativeTo: root) == .file(path: elsewhere.path + "/s.json"))
    }

    @Test("two environments sharing one document location are found; one prefix for both is fine")
    func sharedLocations() throws {
        let shared = try StateLocation.parse("s3://team-state/state.json", relativeTo: root)
        let clash = StateLocation.firstShared([.sandbox: shared, .production: shared])
        #expect(clash?.location == shared)
        #expect(clash?.environments == [.sandbox, .production])
        let prefix = try StateLocation.parse("s3://team-state/retention-sync", relativeTo: root)
        #expect(StateLocation.firstShared([.sandbox: prefix, .production: prefix]) == nil)
    }
}

@Suite("State document")
struct StateDocumentTests {
    typealias Support = StateStoreTestSupport

    @Test("the document is deterministic JSON with sorted keys, snake_case names and a digest")
    func deterministicEncoding() throws {
        let document = try Support.document(for: Support.sandbox)
        let bytes = try document.encoded()
        #expect(bytes == (try document.encoded()))
        let text = String(decoding: bytes, as: UTF8.self)
        let topLevel = text.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.split(separator: "\"")[1] }
        #expect(topLevel == ["app", "content", "defaults", "digest", "environment", "format_version", "performance_test",
                             "published_snapshot", "realtime_url", "updated_at"])
        #expect(text.contains(#""first_uploaded_at" : "2026-01-01T00:00:00.125Z""#))
        #expect(text.contains(#""digest" : "sha256:"#))
        let (decoded, source) = try StateDocument.decode(bytes, expecting: Support.sandbox)
        #expect(decoded == (try document.sealed()))
        #expect(source == .document)
    }

    /// `bytes` with `digest` set as a writer seals it: over the canonical JSON of every field, `digest` "".
    private func resealed(_ bytes: Data) throws -> Data {
        guard case .object(var fields) = try JSONValue(parsing: bytes) else { throw CocoaError(.coderReadCorrupt) }
        fields["digest"] = .string("")
        fields["digest"] = .string("sha256:" + Support.sha256Hex(try CanonicalJSON.encode(JSONValue.object(fields))))
        return try CanonicalJSON.encodePretty(JSONValue.object(fields))
    }

    @Test("the digest's canonical JSON keeps every value as written: integers, booleans, fractions, nulls, nesting")
    func canonicalJSONKeepsValues() throws {
        let received = Data(#"{ "z" : [1, true, 0, false, null], "a" : { "share" : 0.25, "big" : 1e+20, "n" : -7, "s" : "a/b \u00e9" } }"#.utf8)
        let canonical = String(decoding: try CanonicalJSON.encode(try JSONValue(parsing: received)), as: UTF8.self)
        #expect(canonical == #"{"a":{"big":1e+20,"n":-7,"s":"a/b é","share":0.25},"z":[1,true,0,false,null]}"#)
    }

    @Test("a document a newer 1.x wrote, with fields this build does not know, is read; its digest covers them")
    func unknownFieldsAreDigestedAndIgnored() throws {
        let written = try Support.document(for: Support.sandbox).encoded()
        var text = String(decoding: written, as: UTF8.self)
        text = text.replacingOccurrences(of: #""format_version" : "1.1""#, with: #""format_version" : "1.7""#)
        text = text.replacingOccurrences(of: #""app" : {"#,
                                         with: #""announcements" : [ { "share" : 0.25, "shown" : true, "note" : null, "count" : 3 } ], "app" : {"#)
        let newer = try resealed(Data(text.utf8))
        let (decoded, _) = try StateDocument.decode(newer, expecting: Support.sandbox)
        #expect(decoded.formatVersion == "1.7")
        #expect(decoded.content == (try Support.document(for: Support.sandbox)).content)

        let tampered = String(decoding: newer, as: UTF8.self).replacingOccurrences(of: "0.25", with: "0.5")
        #expect(tampered != String(decoding: newer, as: UTF8.self))
        let error = #expect(throws: StateDocumentError.self) {
            try StateDocument.decode(Data(tampered.utf8), expecting: Support.sandbox)
        }
        guard case .digestMismatch = error else { Issue.record("expected a digest mismatch, got \(String(describing: error))"); return }
    }

    @Test("a 1.0 document is read and written back as 1.1; a 2.0 document is refused with the upgrade hint")
    func formatVersions() throws {
        let written = try Support.document(for: Support.sandbox).encoded()
        #expect(String(decoding: written, as: UTF8.self).contains(#""format_version" : "1.1""#))
        let older = try resealed(Data(String(decoding: written, as: UTF8.self)
            .replacingOccurrences(of: #""format_version" : "1.1""#, with: #""format_version" : "1.0""#).utf8))
        let (decoded, _) = try StateDocument.decode(older, expecting: Support.sandbox)
        #expect(decoded.formatVersion == "1.0")
        #expect(String(decoding: try decoded.encoded(), as: UTF8.self).contains(#""format_version" : "1.1""#))

        let newer = try resealed(Data(String(decoding: written, as: UTF8.self)
            .replacingOccurrences(of: #""format_version" : "1.1""#, with: #""format_version" : "2.0""#).utf8))
        let error = #expect(throws: StateDocumentError.self) { try StateDocument.decode(newer, expecting: Support.sandbox) }
        #expect(error == .unsupportedFormatVersion("2.0"))
        #expect(error?.description.contains("upgrade retention-sync") == true)
    }

    @Test("the refresh cursor and a realtime URL waiting for a performance test are written and read back")
    func formatOneOneFields() throws {
        var document = try Support.document(for: Support.production)
        document.defaultsRefreshCursor = 7
        document.realtimeURLAwaitingPerformanceTest = RealtimeURLRefusal(url: "https://example.com/retention/production",
                                                                         refusedAt: Support.uploaded)
        let text = String(decoding: try document.encoded(), as: UTF8.self)
        #expect(text.contains(#""realtime_url_awaiting_performance_test" : {"#))
        #expect(text.contains(#""refused_at" : "2026-01-01T00:00:00.125Z""#))
        let (decoded, _) = try StateDocument.decode(Data(text.utf8), expecting: Support.production)
        #expect(decoded.defaultsRefreshCursor == 7)
        #expect(decoded.realtimeURLAwaitingPerformanceTest == document.realtimeURLAwaitingPerformanceTest)
    }

    @Test("review states are recorded when they change, each with the time it was first seen")
    func reviewStates() throws {
        var document = try Support.document(for: Support.sandbox)
        let id = "6f1c2d3e-0000-5000-8000-000000000001"
        let repeated = document.observeReviewState("APPROVED", of: id, at: Support.uploaded.adding(seconds: 7200))
        let changed = document.observeReviewState("REJECTED", of: id, at: Support.uploaded.adding(seconds: 9000))
        #expect(!repeated)
        #expect(changed)
        #expect(document.record(for: id)?.reviewStates.map(\.state) == ["PENDING", "APPROVED", "REJECTED"])
        #expect(document.record(for: id)?.currentReviewState?.firstSeenAt == Support.uploaded.adding(seconds: 9000))
    }

    @Test("times are written and read back exactly; impossible times are refused")
    func times() {
        #expect(StateTime.format(UTCTime(milliseconds: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(StateTime.parse("2026-11-23T18:25:48.123Z") == UTCTime(milliseconds: 1_795_458_348_123))
        for bad in ["2026-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:00:00Z"] {
            #expect(StateTime.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("the document holds no credential and no customer data")
    func nothingSecret() throws {
        let text = String(decoding: try Support.document(for: Support.sandbox).encoded(), as: UTF8.self).lowercased()
        for word in ["private", "secret", "token", "authorization", "transactionid", "signedpayload"] {
            #expect(!text.contains(word), "\(word)")
        }
    }
}
