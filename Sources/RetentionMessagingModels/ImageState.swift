/// The review state of an uploaded image (`imageState`).
public struct ImageState: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending = ImageState(rawValue: "PENDING")
    public static let approved = ImageState(rawValue: "APPROVED")
    public static let rejected = ImageState(rawValue: "REJECTED")
}
