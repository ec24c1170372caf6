import Basics

/// Manifest text made safe for HTML: the one escaping every page of the project uses (`HTMLText`).
enum HTML {
    static func escape(_ text: String) -> String { HTMLText.escape(text) }
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool { HTMLText.isForbidden(scalar) }
}
