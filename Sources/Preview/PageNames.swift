/// File names and fragment identifiers made from manifest names. A message name is validated to
/// lowercase letters, digits and hyphens, but the preview does not rely on it: whatever the name, its
/// page is one plain file inside `messages/`, never a path that climbs out of the output folder.
enum PageNames {
    /// At most this many characters of the name are kept; the digest keeps long names apart.
    static let maximumLength = 80

    /// `name` itself when it is made only of `a-z`, `0-9` and `-` (not leading) and is short enough;
    /// otherwise its safe characters, `_` for the others, and a digest of the whole name, so two
    /// different names never share a file.
    /// Upper case is kept only where case-insensitive file systems cannot merge two names (anchors).
    static func slug(_ name: String, upperCase: Bool = false) -> String {
        let kept = String(name.unicodeScalars.prefix(maximumLength).map { scalar -> Character in
            isSafe(scalar) || (upperCase && ("A"..."Z").contains(scalar)) ? Character(scalar) : "_"
        })
        let unchanged = !name.isEmpty && kept == name && !name.hasPrefix("-")
        return unchanged ? name : "_" + kept + "-" + hexDigest(name)
    }

    /// The message's page, relative to the output folder.
    static func messagePage(_ name: String) -> String { "messages/\(slug(name)).html" }

    /// A fragment identifier for a locale (`loc-en-US`).
    static func anchor(locale: String) -> String { "loc-" + slug(locale, upperCase: true) }

    static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
    }

    /// 64-bit FNV-1a over the UTF-8 bytes, as 16 hex digits: stable across runs and machines.
    static func hexDigest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
