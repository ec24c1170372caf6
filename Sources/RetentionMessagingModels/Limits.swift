/// Apple's published content limits. Text lengths are validated in the strictest safe reading:
/// a value must fit both in that many Unicode scalars and in that many UTF-16 code units
/// (see `RetentionLimits.length(of:)`).
public enum RetentionLimits {
    public static let headerLength = 66
    public static let bodyLength = 144
    public static let altTextLength = 150
    public static let bulletPointTextLength = 66
    public static let bulletPoints = 5
    public static let messages = 2000
    public static let images = 2000
    public static let realtimeURLLength = 256
    public static let fullSizeWidth = 3840
    public static let fullSizeHeights = 160...2160
    public static let bulletPointSide = 1024
    /// App Store Connect product ids are at most 100 characters.
    public static let productIdLength = 100

    /// The length a limit is checked against: the larger of the Unicode scalar count and the UTF-16
    /// code unit count, so text that fits here fits under every counting Apple's libraries use.
    public static func length(of text: String) -> Int {
        max(text.unicodeScalars.count, text.utf16.count)
    }

    /// What Apple requires of an image of `size`, in words.
    /// Whether every character of a product id is one App Store Connect allows: letters, digits,
    /// `.`, `_` and `-` (the length and the `.`/`..` ids are checked apart).
    public static func hasProductIdCharacters(_ id: String) -> Bool {
        id.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_" || $0 == "-"
        }
    }

    public static func dimensionRule(for size: ImageSize) -> String {
        size == .bulletPoint
            ? "a BULLET_POINT image must be \(bulletPointSide) × \(bulletPointSide) px"
            : "a FULL_SIZE image must be \(fullSizeWidth) px wide and \(fullSizeHeights.lowerBound)–\(fullSizeHeights.upperBound) px high"
    }

    /// Whether a picture of these dimensions fits `size` (anything but BULLET_POINT is read as FULL_SIZE).
    public static func fits(width: Int, height: Int, size: ImageSize) -> Bool {
        size == .bulletPoint
            ? width == bulletPointSide && height == bulletPointSide
            : width == fullSizeWidth && fullSizeHeights.contains(height)
    }

    /// Why a picture of these dimensions does not fit `size`, or nil.
    public static func dimensionProblem(width: Int, height: Int, size: ImageSize) -> String? {
        fits(width: width, height: height, size: size) ? nil : "\(dimensionRule(for: size)), not \(width) × \(height)"
    }
}
