/// `headerPosition`: `ABOVE_BODY` (Apple's default) or `ABOVE_IMAGE` (needs an image).
public struct HeaderPosition: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let aboveBody = HeaderPosition(rawValue: "ABOVE_BODY")
    public static let aboveImage = HeaderPosition(rawValue: "ABOVE_IMAGE")
}
