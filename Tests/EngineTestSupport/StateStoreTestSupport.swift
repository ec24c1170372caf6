import Basics
import Crypto
import Foundation
import TestSupport
import HTTPCore
import HTTPClient
import HTTPServer
import RetentionMessagingModels
import Runtime
import StateStore

enum StateStoreTestSupport {
    static let sandbox = StateOwner(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .sandbox)
    static let production = StateOwner(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production)

    static let uploaded = UTCTime(milliseconds: 1_767_225_600_125)

    static func snapshot(for owner: StateOwner, message: String = "winback") throws -> RuntimeSnapshot {
        try RuntimeSnapshot(
            bundleId: owner.bundleId, appAppleId: owner.appAppleId, environment: owner.environment,
            localeFallbacks: ["de-AT": "de-DE"],
            rules: [SnapshotRule(id: "cancel/\(message)", version: "0123456789abcdef", match: SnapshotMatch(locales: ["en-US"]),
                                 response: SnapshotResponse(kind: .message, message: message,
                                                            messageIdentifiers: ["en-US": "6f1c2d3e-0000-5000-8000-000000000001"]))]
        ).sealed()
    }

    /// A document with one of everything the state records.
    static func document(for owner: StateOwner, message: String = "winback") throws -> StateDocument {
        var document = StateDocument(owner: owner)
        document.snapshot = try snapshot(for: owner, message: message)
        document.recordUpload(ContentRecord(
            identifier: "6f1c2d3e-0000-5000-8000-000000000001", kind: .message, name: message, locale: "en-US",
            productScope: "com.example.app.monthly", contentVersion: "c0ffee",
            uploadBody: #"{"header":"Before you go","body":"Stay a little longer."}"#, firstUploadedAt: uploaded))
        document.recordUpload(ContentRecord(
            identifier: "0a1b2c3d-0000-5000-8000-000000000002", kind: .image, name: "hero", contentVersion: "FULL_SIZE:abc",
            image: ImageFacts(size: "FULL_SIZE", width: 3840, height: 2160, byteCount: 123_456, sha256: String(repeating: "ab", count: 32)),
            firstUploadedAt: uploaded))
        document.observeReviewState("PENDING", of: "6f1c2d3e-0000-5000-8000-000000000001", at: uploaded)
        document.observeReviewState("APPROVED", of: "6f1c2d3e-0000-5000-8000-000000000001", at: uploaded + UTCTime.hour)
        document.recordDefault(productId: "com.example.app.monthly", locale: "en-US",
                               messageIdentifier: "6f1c2d3e-0000-5000-8000-000000000001", at: uploaded)
        document.realtimeURL = RealtimeURLRecord(url: "https://example.com/retention", appliedAt: uploaded)
        document.performanceTest = PerformanceTestRecord(
            requestId: "perf-1", result: PerformanceTestResultResponse(result: .pass, successRate: 0.99), observedAt: uploaded)
        document.updatedAt = uploaded
        return document
    }

    static func sha256Hex(_ data: Data) -> String {
        Digest.sha256Hex(Array(data))
    }

    /// A fresh folder under the system's temporary folder, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        URL(fileURLWithPath: StateLocationPaths.real(try temporaryFolder("state-store-tests").path))
    }

    /// A loopback port nothing listens on: bound, read back, and released.
    static func closedPort() -> Int {
        let descriptor = SocketPlatform.streamSocket(family: AF_INET)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

enum StateLocationPaths {
    static func real(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
