import Foundation
import HTTP
import RetentionMessaging

/// A small in-memory stand-in for Apple's API with the behaviour the reconciler relies on:
/// 409 on re-upload, sandbox auto-approval, defaults refused for unapproved content, request
/// counting and a halt after N requests (the tool dying half-way).
final class FakeRetentionAPI: RetentionMessagingAPI, @unchecked Sendable {
    struct State: Equatable {
        var messages: [String: (MessageState, UploadMessageRequestBody)] = [:]
        var images: [String: (ImageState, ImageSize)] = [:]
        var defaults: [String: String] = [:]
        var realtimeURL: String?

        static func == (lhs: State, rhs: State) -> Bool {
            lhs.messages.mapValues { "\($0.0.rawValue)|\($0.1)" } == rhs.messages.mapValues { "\($0.0.rawValue)|\($0.1)" }
                && lhs.images.mapValues { "\($0.0.rawValue)|\($0.1.rawValue)" } == rhs.images.mapValues { "\($0.0.rawValue)|\($0.1.rawValue)" }
                && lhs.defaults == rhs.defaults && lhs.realtimeURL == rhs.realtimeURL
        }
    }

    let environment: Environment
    private let lock = NSLock()
    private var _state = State()
    private var counts = RequestCounts()
    var haltAfterRequests: Int? {
        get { lock.withLock { _halt } }
        set { lock.withLock { _halt = newValue } }
    }
    private var _halt: Int?
    private var served = 0

    init(environment: Environment) { self.environment = environment }

    var state: State {
        get { lock.withLock { _state } }
        set { lock.withLock { _state = newValue } }
    }
    var requestCounts: RequestCounts { lock.withLock { counts } }

    func approveAll() {
        lock.withLock {
            for key in _state.messages.keys where _state.messages[key]?.0 == .pending { _state.messages[key]?.0 = .approved }
            for key in _state.images.keys where _state.images[key]?.0 == .pending { _state.images[key]?.0 = .approved }
        }
    }

    func setMessage(_ id: String, _ state: MessageState) { lock.withLock { _state.messages[id]?.0 = state } }
    func setImage(_ id: String, _ state: ImageState) { lock.withLock { _state.images[id]?.0 = state } }

    private func request<T>(defaultClass: Bool = false, _ body: (inout State) throws -> T) throws -> T {
        try lock.withLock {
            served += 1
            if let halt = _halt, served > halt { throw RetentionMessagingError.transport(HTTPError(.other, "halted")) }
            if defaultClass { counts.configureDefault += 1 } else { counts.other += 1 }
            return try body(&_state)
        }
    }

    private static func api(_ status: Int, _ code: Int) -> RetentionMessagingError { .api(status: status, errorCode: code, errorMessage: nil) }

    func uploadMessage(identifier: String, body: UploadMessageRequestBody) async throws {
        try request { state in
            if state.messages[identifier] != nil { throw Self.api(409, AppleErrorCode.messageAlreadyExists) }
            if state.messages.count >= 2000 { throw Self.api(403, AppleErrorCode.maximumMessagesReached) }
            state.messages[identifier] = (environment == .sandbox ? .approved : .pending, body)
        }
    }

    func deleteMessage(identifier: String) async throws {
        try request { state in
            guard state.messages.removeValue(forKey: identifier) != nil else { throw Self.api(404, AppleErrorCode.messageNotFound) }
        }
    }

    func getMessageList() async throws -> GetMessageListResponse {
        try request { state in
            GetMessageListResponse(messageIdentifiers: state.messages.map {
                GetMessageListResponseItem(messageIdentifier: $0.key, messageState: $0.value.0)
            })
        }
    }

    func uploadImage(identifier: String, size: ImageSize, png: [UInt8]) async throws {
        try request { state in
            if state.images[identifier] != nil { throw Self.api(409, AppleErrorCode.imageAlreadyExists) }
            state.images[identifier] = (environment == .sandbox ? .approved : .pending, size)
        }
    }

    func deleteImage(identifier: String) async throws {
        try request { state in
            guard state.images[identifier] != nil else { throw Self.api(404, AppleErrorCode.imageNotFound) }
            if state.messages.values.contains(where: { $0.1.referencedImageIdentifiers.contains(identifier) }) {
                throw Self.api(403, AppleErrorCode.imageInUse)
            }
            state.images[identifier] = nil
        }
    }

    func getImageList() async throws -> GetImageListResponse {
        try request { state in
            GetImageListResponse(imageIdentifiers: state.images.map {
                GetImageListResponseItem(imageIdentifier: $0.key, imageState: $0.value.0, imageSize: $0.value.1)
            })
        }
    }

    func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws {
        try request(defaultClass: true) { state in
            guard let message = state.messages[messageIdentifier] else { throw Self.api(404, AppleErrorCode.messageNotFound) }
            guard message.0 == .approved else { throw Self.api(403, AppleErrorCode.messageNotApproved) }
            for image in message.1.referencedImageIdentifiers where state.images[image]?.0 != .approved {
                throw Self.api(403, AppleErrorCode.imageNotApproved)
            }
            state.defaults["\(productId)/\(locale)"] = messageIdentifier
        }
    }

    func getDefaultMessage(productId: String, locale: String) async throws -> DefaultConfigurationRequest? {
        try request { state in state.defaults["\(productId)/\(locale)"].map(DefaultConfigurationRequest.init) }
    }

    func deleteDefaultMessage(productId: String, locale: String) async throws {
        try request { state in state.defaults["\(productId)/\(locale)"] = nil }
    }

    func configureRealtimeURL(_ url: String) async throws { try request { state in state.realtimeURL = url } }
    func getRealtimeURL() async throws -> String? { try request { state in state.realtimeURL } }
    func deleteRealtimeURL() async throws { try request { state in state.realtimeURL = nil } }
}
