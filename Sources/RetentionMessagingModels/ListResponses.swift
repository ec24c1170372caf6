/// `GET /message/list`: identifiers and states only, never content.
public struct GetMessageListResponse: Codable, Sendable, Hashable {
    public var messageIdentifiers: [GetMessageListResponseItem]
    public init(messageIdentifiers: [GetMessageListResponseItem]) { self.messageIdentifiers = messageIdentifiers }
}

public struct GetMessageListResponseItem: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var messageState: MessageState
    public init(messageIdentifier: String, messageState: MessageState) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}

/// `GET /image/list`: identifiers, states and sizes only, never content.
public struct GetImageListResponse: Codable, Sendable, Hashable {
    public var imageIdentifiers: [GetImageListResponseItem]
    public init(imageIdentifiers: [GetImageListResponseItem]) { self.imageIdentifiers = imageIdentifiers }
}

public struct GetImageListResponseItem: Codable, Sendable, Hashable {
    public var imageIdentifier: String
    public var imageState: ImageState
    public var imageSize: ImageSize?
    public init(imageIdentifier: String, imageState: ImageState, imageSize: ImageSize?) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }
}
