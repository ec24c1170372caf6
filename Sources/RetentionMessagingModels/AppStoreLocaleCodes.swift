/// App Store Connect's locale codes, spelled (and cased) exactly as Apple spells them: the one
/// list the manifests, the emulator and the docs share. Codes are case-sensitive: `en-us` is not `en-US`.
public enum AppStoreLocaleCodes {
    /// The 39 locales App Store Connect had before 2026-03-31.
    public static let established: [String] = [
        "ar-SA", "ca", "cs", "da", "de-DE", "el", "en-AU", "en-CA", "en-GB", "en-US", "es-ES", "es-MX", "fi",
        "fr-CA", "fr-FR", "he", "hi", "hr", "hu", "id", "it", "ja", "ko", "ms", "nl-NL", "no", "pl", "pt-BR",
        "pt-PT", "ro", "ru", "sk", "sv", "th", "tr", "uk", "vi", "zh-Hans", "zh-Hant",
    ]

    /// The 11 locales App Store Connect added on 2026-03-31; whether the Retention Messaging API
    /// accepts them is not confirmed yet.
    public static let addedOn20260331: [String] = [
        "bn-BD", "gu-IN", "kn-IN", "ml-IN", "mr-IN", "or-IN", "pa-IN", "sl-SI", "ta-IN", "te-IN", "ur-PK",
    ]

    /// Every code, sorted.
    public static let all: [String] = (established + addedOn20260331).sorted()

    private static let known = Set(all)
    private static let unconfirmed = Set(addedOn20260331)

    public static func isListed(_ code: String) -> Bool { known.contains(code) }

    /// Whether Apple's support for `code` in this API is still unconfirmed.
    public static func isUnconfirmed(_ code: String) -> Bool { unconfirmed.contains(code) }

    /// The shape of a locale as a request path or payload carries it: a lowercase 2–3 letter
    /// language, then optionally `-` and a 2–4 character region or script (`en-US`, `zh-Hans`).
    public static func isWellFormed(_ code: String) -> Bool {
        let parts = code.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count),
              language.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) else { return false }
        guard parts.count == 2 else { return true }
        let region = parts[1]
        return (2...4).contains(region.count) && region.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        }
    }
}
