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

    /// The length a limit is checked against: the larger of the Unicode scalar count and the UTF-16
    /// code unit count, so text that fits here fits under every counting Apple's libraries use.
    public static func length(of text: String) -> Int {
        max(text.unicodeScalars.count, text.utf16.count)
    }
}
