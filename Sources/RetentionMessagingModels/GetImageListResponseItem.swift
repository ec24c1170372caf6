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
