public import Foundation
import RetentionMessaging
public import RetentionMessagingModels
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One environment's remote state as the emulator holds it: what Apple knows but never lists.
public struct EmulatorState: Sendable, Hashable, Codable {
    public var messages: [String: EmulatedMessage]
    public var images: [String: EmulatedImage]
    public var defaults: [DefaultKey: String]
    public var realtimeURL: String?
    /// Performance tests by request id (sandbox only); one that is `PENDING` is running.
    public var performanceTests: [String: PerformanceTestStatus]
    /// Each performance test's latest result, in Apple's shape, by request id.
    public var performanceTestResults: [String: PerformanceTestResultResponse]
    /// Sandbox test transactions by original transaction id (what `POST /performanceTest` needs).
    public var testTransactions: [String: SandboxTransaction]
    /// Every App Store Server Notification the emulator produced in this environment, in the order
    /// produced (what Get Notification History answers from).
    public var notificationHistory: [NotificationHistoryRecord]

    public init(messages: [String: EmulatedMessage] = [:], images: [String: EmulatedImage] = [:],
                defaults: [DefaultKey: String] = [:], realtimeURL: String? = nil,
                performanceTests: [String: PerformanceTestStatus] = [:],
                performanceTestResults: [String: PerformanceTestResultResponse] = [:],
                testTransactions: [String: SandboxTransaction] = [:], notificationHistory: [NotificationHistoryRecord] = []) {
        self.messages = messages
        self.images = images
        self.defaults = defaults
        self.realtimeURL = realtimeURL
        self.performanceTests = performanceTests
        self.performanceTestResults = performanceTestResults
        self.testTransactions = testTransactions
        self.notificationHistory = notificationHistory
    }

    public static let empty = EmulatorState()

    /// True once a performance test passed (what production needs before a realtime URL).
    public var performanceTestPassed: Bool { performanceTests.values.contains(.pass) }

    /// Whether a stored message refers to the image.
    public func isImageInUse(_ identifier: String) -> Bool {
        messages.values.contains { $0.body.referencedImageIdentifiers.contains(identifier) }
    }

    private enum CodingKeys: String, CodingKey {
        case messages, images, defaults, realtimeURL, performanceTests, performanceTestResults, testTransactions, notificationHistory
    }

    private struct DefaultEntry: Codable {
        var productId: String
        var locale: String
        var messageIdentifier: String
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decodeIfPresent([String: EmulatedMessage].self, forKey: .messages) ?? [:]
        images = try container.decodeIfPresent([String: EmulatedImage].self, forKey: .images) ?? [:]
        let entries = try container.decodeIfPresent([DefaultEntry].self, forKey: .defaults) ?? []
        defaults = Dictionary(entries.map { (DefaultKey(productId: $0.productId, locale: $0.locale), $0.messageIdentifier) },
                              uniquingKeysWith: { _, last in last })
        realtimeURL = try container.decodeIfPresent(String.self, forKey: .realtimeURL)
        performanceTests = try container.decodeIfPresent([String: PerformanceTestStatus].self, forKey: .performanceTests) ?? [:]
        performanceTestResults = try container.decodeIfPresent([String: PerformanceTestResultResponse].self,
                                                               forKey: .performanceTestResults) ?? [:]
        testTransactions = try container.decodeIfPresent([String: SandboxTransaction].self, forKey: .testTransactions) ?? [:]
        notificationHistory = try container.decodeIfPresent([NotificationHistoryRecord].self, forKey: .notificationHistory) ?? []
    }

    /// Defaults are written as a list sorted by product and locale, so the file is stable.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        try container.encode(images, forKey: .images)
        let entries = defaults.sorted { $0.key < $1.key }
            .map { DefaultEntry(productId: $0.key.productId, locale: $0.key.locale, messageIdentifier: $0.value) }
        try container.encode(entries, forKey: .defaults)
        try container.encodeIfPresent(realtimeURL, forKey: .realtimeURL)
        try container.encode(performanceTests, forKey: .performanceTests)
        try container.encode(performanceTestResults, forKey: .performanceTestResults)
        try container.encode(testTransactions, forKey: .testTransactions)
        // Written only once there is some, so files of emulators that never simulated customers stay as they were.
        if !notificationHistory.isEmpty { try container.encode(notificationHistory, forKey: .notificationHistory) }
    }
}

/// A sandbox subscription the emulator knows, registered with `POST /emulator/transactions`:
/// what a performance test's realtime requests carry, and what makes Apple refuse the id.
public struct SandboxTransaction: Sendable, Hashable, Codable {
    public var originalTransactionId: String
    public var productId: String
    /// The `userLocale` of the realtime requests (default `en-US`).
    public var locale: String
    /// False: the id is a later transaction of the subscription (400 4000187).
    public var original: Bool
    /// True: the subscription is family-shared (400 4000185).
    public var familyShared: Bool
    /// True: the id is an app transaction id, not a subscription's (400 4000048).
    public var appTransaction: Bool

    public init(originalTransactionId: String, productId: String, locale: String = "en-US", original: Bool = true,
                familyShared: Bool = false, appTransaction: Bool = false) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.locale = locale
        self.original = original
        self.familyShared = familyShared
        self.appTransaction = appTransaction
    }

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, productId, locale, original, familyShared, appTransaction
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.decode(String.self, forKey: .originalTransactionId)
        productId = try container.decode(String.self, forKey: .productId)
        locale = try container.decodeIfPresent(String.self, forKey: .locale) ?? "en-US"
        original = try container.decodeIfPresent(Bool.self, forKey: .original) ?? true
        familyShared = try container.decodeIfPresent(Bool.self, forKey: .familyShared) ?? false
        appTransaction = try container.decodeIfPresent(Bool.self, forKey: .appTransaction) ?? false
    }
}

/// A message as uploaded, with its review state.
public struct EmulatedMessage: Sendable, Hashable, Codable {
    public var state: MessageState
    public var body: UploadMessageRequestBody
    public init(state: MessageState, body: UploadMessageRequestBody) {
        self.state = state
        self.body = body
    }
}

/// An image as uploaded: its review state, size class, dimensions and a digest of its bytes.
public struct EmulatedImage: Sendable, Hashable, Codable {
    public var state: ImageState
    public var size: ImageSize
    public var width: Int
    public var height: Int
    public var byteCount: Int
    public var sha256: String
    public init(state: ImageState, size: ImageSize, width: Int, height: Int, byteCount: Int, sha256: String) {
        self.state = state
        self.size = size
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.sha256 = sha256
    }
}

/// The (product, locale) pair a default message is configured for.
public struct DefaultKey: Sendable, Hashable, Codable, Comparable {
    public var productId: String
    public var locale: String
    public init(productId: String, locale: String) {
        self.productId = productId
        self.locale = locale
    }
    public static func < (lhs: DefaultKey, rhs: DefaultKey) -> Bool {
        (lhs.productId, lhs.locale) < (rhs.productId, rhs.locale)
    }
}

/// One app's two environments.
public struct EmulatorAppState: Sendable, Hashable, Codable {
    public var sandbox: EmulatorState
    public var production: EmulatorState

    public init(sandbox: EmulatorState, production: EmulatorState) {
        self.sandbox = sandbox
        self.production = production
    }
}

/// What `--state FILE` holds: the first app's two environments (`sandbox`, `production`, and its
/// `bundleId` once known), and every other app's under `otherApps`, by bundle id. A file of an
/// emulator that held one app reads as before.
public struct EmulatorStateFile: Sendable, Hashable, Codable {
    public var formatVersion: Int
    /// The first app's bundle id; nil until a request named it.
    public var bundleId: String?
    public var sandbox: EmulatorState
    public var production: EmulatorState
    public var otherApps: [String: EmulatorAppState]

    public init(sandbox: EmulatorState, production: EmulatorState, bundleId: String? = nil, otherApps: [String: EmulatorAppState] = [:]) {
        formatVersion = 1
        self.bundleId = bundleId
        self.sandbox = sandbox
        self.production = production
        self.otherApps = otherApps
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, bundleId, sandbox, production, otherApps
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        sandbox = try container.decode(EmulatorState.self, forKey: .sandbox)
        production = try container.decode(EmulatorState.self, forKey: .production)
        otherApps = try container.decodeIfPresent([String: EmulatorAppState].self, forKey: .otherApps) ?? [:]
    }

    /// `bundleId` and `otherApps` are written only when there is something, so a one-app file stays as it was.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encodeIfPresent(bundleId, forKey: .bundleId)
        try container.encode(sandbox, forKey: .sandbox)
        try container.encode(production, forKey: .production)
        if !otherApps.isEmpty { try container.encode(otherApps, forKey: .otherApps) }
    }

    /// Reads a state file written by `write(to:)`.
    public static func read(from url: URL) throws(EmulatorError) -> EmulatorStateFile {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .stateFile("cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            let file = try JSONDecoder().decode(EmulatorStateFile.self, from: data)
            guard file.formatVersion == 1 else {
                throw EmulatorError.stateFile("\(url.path): unsupported formatVersion \(file.formatVersion) (this emulator writes 1)")
            }
            return file
        } catch let error as EmulatorError {
            throw error
        } catch {
            throw .stateFile("\(url.path) is not an emulator state file (\(error)); delete it to start empty")
        }
    }

    /// Writes to a temporary file beside `url` and renames it over `url`, so a crash never
    /// leaves half a file.
    public func write(to url: URL) throws(EmulatorError) {
        do {
            let data = try CanonicalJSON.encodePretty(self)
            let temporary = url.deletingLastPathComponent()
                .appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
            try data.write(to: temporary)
            if rename(temporary.path, url.path) != 0 {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
                throw EmulatorError.stateFile("cannot replace \(url.path): \(reason)")
            }
        } catch let error as EmulatorError {
            throw error
        } catch {
            throw .stateFile("cannot write \(url.path): \(error.localizedDescription)")
        }
    }
}

/// Errors of the emulator's own (admin and persistence) calls.
public enum EmulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    case notFound(String)
    case stateFile(String)
    /// A `POST /emulator/seed` body that cannot be seeded.
    case invalidSeed(String)

    public var description: String {
        switch self {
        case .notFound(let text): text
        case .stateFile(let text): text
        case .invalidSeed(let text): text
        }
    }
}
