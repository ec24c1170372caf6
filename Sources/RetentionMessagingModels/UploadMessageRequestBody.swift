/// The body of `PUT /message/{messageIdentifier}`. Identifiers are lowercase UUID strings.
public struct UploadMessageRequestBody: Codable, Sendable, Hashable {
    public var header: String
    public var body: String
    public var image: UploadMessageImage?
    public var bulletPoints: [UploadMessageBulletPoint]?
    public var headerPosition: HeaderPosition?

    public init(header: String, body: String, image: UploadMessageImage? = nil,
                bulletPoints: [UploadMessageBulletPoint]? = nil, headerPosition: HeaderPosition? = nil) {
        self.header = header
        self.body = body
        self.image = image
        self.bulletPoints = bulletPoints
        self.headerPosition = headerPosition
    }

    /// Every image identifier the message refers to, its own image first.
    public var referencedImageIdentifiers: [String] {
        (image.map { [$0.imageIdentifier] } ?? []) + (bulletPoints ?? []).map(\.imageIdentifier)
    }
}

public struct UploadMessageImage: Codable, Sendable, Hashable {
    public var imageIdentifier: String
    public var altText: String

    public init(imageIdentifier: String, altText: String) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

public struct UploadMessageBulletPoint: Codable, Sendable, Hashable {
    public var text: String
    public var imageIdentifier: String
    public var altText: String

    public init(text: String, imageIdentifier: String, altText: String) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}
