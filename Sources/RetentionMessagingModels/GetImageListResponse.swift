/// `GET /image/list`: identifiers, states and sizes only, never content.
public struct GetImageListResponse: Codable, Sendable, Hashable {
    public var imageIdentifiers: [GetImageListResponseItem]
    public init(imageIdentifiers: [GetImageListResponseItem]) { self.imageIdentifiers = imageIdentifiers }
}
