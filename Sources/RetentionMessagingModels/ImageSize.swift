/// `imageSize`: `FULL_SIZE` (3840 px wide, 160–2160 px high) or `BULLET_POINT` (1024 × 1024 px).
public struct ImageSize: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let fullSize = ImageSize(rawValue: "FULL_SIZE")
    public static let bulletPoint = ImageSize(rawValue: "BULLET_POINT")
}
