import Foundation
import RetentionMessagingModels

/// The locale codes App Store Connect accepts for retention messages, spelled as Apple spells them.
public enum AppStoreLocales {
    public static let all: [String] = AppStoreLocaleCodes.all

    static let known = Set(all)
    private static let byLowercase = Dictionary(uniqueKeysWithValues: all.map { ($0.lowercased(), $0) })
    /// Common codes from other systems and what App Store Connect calls them.
    private static let aliases = [
        "nb": "no", "nb-no": "no", "nn": "no", "no-no": "no", "iw": "he", "he-il": "he", "in": "id",
        "zh-cn": "zh-Hans", "zh-sg": "zh-Hans", "zh-tw": "zh-Hant", "zh-hk": "zh-Hant", "zh": "zh-Hans",
        "ja-jp": "ja", "ko-kr": "ko", "it-it": "it", "ru-ru": "ru", "sv-se": "sv", "en": "en-US", "de": "de-DE",
        "fr": "fr-FR", "es": "es-ES", "pt": "pt-BR", "nl": "nl-NL", "ar": "ar-SA",
        // Third-party tools disagree on these two; App Store Connect writes them with a region.
        "bn": "bn-BD", "ur": "ur-PK", "sl": "sl-SI",
    ]

    public static func isKnown(_ code: String) -> Bool { known.contains(code) }

    /// Added to App Store Connect on 2026-03-31; the Retention Messaging API's support is unconfirmed.
    public static func isUnconfirmed(_ code: String) -> Bool { AppStoreLocaleCodes.isUnconfirmed(code) }

    /// The correct spelling of a code that differs only in separator or case (`en_US`, `en-us`).
    static func canonical(_ code: String) -> String? {
        byLowercase[code.replacingOccurrences(of: "_", with: "-").lowercased()]
    }

    /// Why `code` is not an App Store Connect locale and what to write instead; nil when it is one.
    static func problem(_ code: String) -> (message: String, hint: String)? {
        guard !known.contains(code) else { return nil }
        let hyphenated = code.replacingOccurrences(of: "_", with: "-")
        if hyphenated != code, let canonical = byLowercase[hyphenated.lowercased()] {
            return ("locale '\(code)' uses an underscore", "use \(canonical)")
        }
        if let canonical = byLowercase[hyphenated.lowercased()] {
            return ("locale '\(code)' is not spelled as App Store Connect spells it", "use \(canonical)")
        }
        let message = "'\(code)' is not an App Store Connect locale code"
        let lowered = hyphenated.lowercased()
        if let alias = aliases[lowered] { return (message, "did you mean \(alias)?") }
        let language = lowered.split(separator: "-").first.map(String.init) ?? lowered
        let sameLanguage = all.filter { $0.lowercased() == language || $0.lowercased().hasPrefix(language + "-") }
        if !sameLanguage.isEmpty {
            return (message, "did you mean \(sameLanguage.joined(separator: " or "))?")
        }
        if let suggestion = NearMiss.best(hyphenated, in: all) {
            return (message, "did you mean \(suggestion)?")
        }
        return (message, "App Store Connect locales are \(all.joined(separator: ", "))")
    }

    /// Whether `code` is shaped like a BCP 47 tag (`de-AT`), for locales customers may have
    /// (localeFallbacks keys) that need not be App Store Connect codes.
    static func isWellFormedTag(_ code: String) -> Bool {
        let parts = code.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count),
              language.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }
}
