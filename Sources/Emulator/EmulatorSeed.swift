import Foundation
public import RetentionMessagingModels
import Synchronization

/// Content the tool did not make, as `POST /emulator/seed` and `Emulator.seed(_:in:bundleId:)`
/// take it: messages and images with any identifiers and review states, defaults, a realtime URL.
/// Seeding is an admin act, not Apple's API: it overwrites what holds the same identifier and
/// skips Apple's checks (a default may point at a message that is not approved), so a test can
/// build any app a team might already run.
public struct EmulatorSeed: Sendable, Hashable, Codable {
    public struct Message: Sendable, Hashable, Codable {
        public var identifier: String
        /// `PENDING`, `APPROVED` or `REJECTED`; `APPROVED` when left out.
        public var state: MessageState?
        /// The text Apple would hold (never returned by the list endpoints); a placeholder when left out.
        public var header: String?
        public var body: String?

        public init(identifier: String, state: MessageState? = nil, header: String? = nil, body: String? = nil) {
            self.identifier = identifier
            self.state = state
            self.header = header
            self.body = body
        }
    }

    public struct Image: Sendable, Hashable, Codable {
        public var identifier: String
        public var state: ImageState?
        /// `FULL_SIZE` when left out.
        public var size: ImageSize?

        public init(identifier: String, state: ImageState? = nil, size: ImageSize? = nil) {
            self.identifier = identifier
            self.state = state
            self.size = size
        }
    }

    public struct Default: Sendable, Hashable, Codable {
        public var productId: String
        public var locale: String
        public var messageIdentifier: String

        public init(productId: String, locale: String, messageIdentifier: String) {
            self.productId = productId
            self.locale = locale
            self.messageIdentifier = messageIdentifier
        }
    }

    public var messages: [Message]?
    public var images: [Image]?
    public var defaults: [Default]?
    public var realtimeURL: String?

    public init(messages: [Message] = [], images: [Image] = [], defaults: [Default] = [], realtimeURL: String? = nil) {
        self.messages = messages
        self.images = images
        self.defaults = defaults
        self.realtimeURL = realtimeURL
    }

    /// What is wrong with the seed, or nil: identifiers are UUIDs, states and sizes known, every
    /// default names a message the seed or `existing` holds.
    func problem(existingMessages: Set<String>) -> String? {
        var messageIds = existingMessages
        for message in messages ?? [] {
            guard UUIDText.isUUID(message.identifier) else { return "message identifier '\(message.identifier)' is not a UUID" }
            if let state = message.state, ![.pending, .approved, .rejected].contains(state) {
                return "message \(message.identifier): unknown state '\(state.rawValue)' (PENDING, APPROVED or REJECTED)"
            }
            messageIds.insert(message.identifier.lowercased())
        }
        for image in images ?? [] {
            guard UUIDText.isUUID(image.identifier) else { return "image identifier '\(image.identifier)' is not a UUID" }
            if let state = image.state, ![.pending, .approved, .rejected].contains(state) {
                return "image \(image.identifier): unknown state '\(state.rawValue)' (PENDING, APPROVED or REJECTED)"
            }
            if let size = image.size, size != .fullSize, size != .bulletPoint {
                return "image \(image.identifier): unknown size '\(size.rawValue)' (FULL_SIZE or BULLET_POINT)"
            }
        }
        for item in defaults ?? [] {
            guard UUIDText.isUUID(item.messageIdentifier) else { return "default \(item.productId)/\(item.locale): '\(item.messageIdentifier)' is not a UUID" }
            guard !item.productId.isEmpty, AppStoreLocaleCodes.isWellFormed(item.locale) else {
                return "default \(item.productId)/\(item.locale): needs a product id and a locale such as en-US"
            }
            guard messageIds.contains(item.messageIdentifier.lowercased()) else {
                return "default \(item.productId)/\(item.locale): no message \(item.messageIdentifier) (seed it in \"messages\")"
            }
        }
        if let url = realtimeURL, !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
            return "realtimeURL must start with https:// (or http:// for a local server)"
        }
        return nil
    }

    /// Writes the seed into `state`.
    func apply(to state: inout EmulatorState) {
        for message in messages ?? [] {
            let body = UploadMessageRequestBody(header: message.header ?? "Seeded message", body: message.body ?? "Content the tool did not make.")
            state.messages[message.identifier.lowercased()] = EmulatedMessage(state: message.state ?? .approved, body: body)
        }
        for image in images ?? [] {
            let size = image.size ?? .fullSize
            let (width, height) = size == .bulletPoint ? (1024, 1024) : (3840, 1080)
            state.images[image.identifier.lowercased()] = EmulatedImage(state: image.state ?? .approved, size: size, width: width,
                                                                        height: height, byteCount: 0, sha256: "")
        }
        for item in defaults ?? [] {
            state.defaults[DefaultKey(productId: item.productId, locale: item.locale)] = item.messageIdentifier.lowercased()
        }
        if let url = realtimeURL { state.realtimeURL = url }
    }

    /// What the seed holds, for the answer.
    var counts: [String: Int] {
        ["messages": messages?.count ?? 0, "images": images?.count ?? 0, "defaults": defaults?.count ?? 0]
    }
}

extension Emulator {
    /// Puts content the tool did not make into one environment of one app (nil: the first app).
    public func seed(_ seed: EmulatorSeed, in environment: Environment, bundleId: String? = nil) throws(EmulatorError) {
        let problem = core.withLock { core -> String? in
            let app = core.app(bundleId)
            var state = core[app, environment].state
            if let problem = seed.problem(existingMessages: Set(state.messages.keys)) { return problem }
            seed.apply(to: &state)
            core[app, environment].state = state
            return nil
        }
        if let problem { throw .invalidSeed(problem) }
        persist()
    }
}
