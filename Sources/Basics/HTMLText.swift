/// Untrusted text made safe for an HTML page (the sheet preview, the results page): every string
/// from manifests or events reaches a page only through here, so a header of `<script>` or
/// `</style>` shows as text and an alt text cannot close its attribute.
public enum HTMLText {
    /// Text for element content or a quoted attribute value: `&`, `<`, `>`, `"` and `'` become
    /// character references; control characters and noncharacters, which HTML forbids, become U+FFFD.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default:
                if isForbidden(scalar) {
                    escaped.unicodeScalars.append("\u{FFFD}")
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }

    /// C0 and C1 controls (but tab and line feed), DEL and the Unicode noncharacters.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value == 0x09 || value == 0x0A { return false }
        if value < 0x20 || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) { return true }
        return value & 0xFFFE == 0xFFFE
    }
}
