import Basics
import Foundation
import RetentionMessagingModels
import YAML

/// Offline checks of a loaded manifest set against Apple's rules and the format's own: every
/// problem in one pass, each a `Diagnostic` with a stable code, sorted by place.
public enum ManifestValidator {
    public static func validate(_ set: ManifestSet) -> [Diagnostic] {
        check(set).diagnostics
    }

    /// Validates `set` and hands back the references it resolved on the way, so nothing later
    /// resolves a name again.
    public static func check(_ set: ManifestSet) -> ManifestCheck {
        check(set, skipping: BrokenDocuments())
    }

    static func check(_ set: ManifestSet, skipping broken: BrokenDocuments) -> ManifestCheck {
        var run = ValidationRun(set: set, broken: broken)
        for kind in ManifestKinds.all { kind.validate(&run) }
        for kind in ManifestKinds.all { kind.checkUnused(&run) }
        var seen = Set<Diagnostic>()
        return ManifestCheck(diagnostics: Diagnostic.sorted(run.diagnostics.filter { seen.insert($0).inserted }),
                             validated: run.references.resolved(in: set))
    }

    static func unknownProduct(_ id: String, at location: SourceLocation, declared: [String]) -> Diagnostic {
        .error("unknown-product", at: location, "product '\(id)' is not declared in the App",
               hint: NearMiss.best(id, in: declared, maxDistance: NearMiss.distance(for: id)).map { "did you mean '\($0)'?" }
                ?? "declare it under 'products' in the App document (declared: \(declared.joined(separator: ", ")))")
    }

    /// App Store Connect's limit on a product id's length.
    public static let productIdMaxLength = RetentionLimits.productIdLength

    /// Why `id` cannot be an App Store Connect product id, or nil. Checked offline because a path
    /// segment such as `..` would otherwise change the route a request takes.
    static func productIdProblem(_ id: String) -> String? {
        if id.isEmpty { return "product id is empty" }
        if id == "." || id == ".." { return "product id '\(id)' is not a product id" }
        if id.count > productIdMaxLength {
            return "product id is \(id.count) characters long; App Store Connect allows at most \(productIdMaxLength)"
        }
        return RetentionLimits.hasProductIdCharacters(id) ? nil : "product id '\(Diagnostic.visible(id))' holds characters other than letters, digits, '.', '_' and '-'"
    }

    /// Names (messages, flows, rules) appear in identities, terminals and pull-request comments:
    /// lowercase letters, digits and hyphens only.
    static func isValidName(_ name: String) -> Bool { isValidMessageName(name) }

    /// A name made valid, for the hint.
    static func suggestedName(_ name: String) -> String {
        String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" })
    }

    /// Message names are purposes in identities: lowercase letters, digits and hyphens.
    static func isValidMessageName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, isNameCharacter(first), first != "-" else { return false }
        return name.unicodeScalars.allSatisfy(isNameCharacter)
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
    }
}

/// The state of one validation pass: lookups built once, so every check is a dictionary lookup.
struct ValidationRun {
    let set: ManifestSet
    let broken: BrokenDocuments
    var diagnostics: [Diagnostic] = []

    /// Per kind, where the first element of each name is in what the set holds of it: what a
    /// written name resolves to (see `position(of:in:)`).
    private let positions: [ObjectIdentifier: [String: Int]]
    let messagesByName: [String: MessageManifest]
    let productsById: [String: ProductManifest]
    let productIds: [String]
    /// Each product's locales as declared (an invalid code is reported once, where it is declared).
    let declaredLocales: [String: Set<String>]
    /// Each product's locales that are App Store Connect codes: the pairs coverage is checked for.
    let productLocales: [String: Set<String>]
    let messageLocales: [String: Set<String>]
    let declaredEnvironments: Set<Environment>
    var references: ReferenceRecorder
    var defaultPairs: [String: [String: DefaultAssignment]] = [:]
    var usedImages = Set<String>()
    var usedMessages = Set<String>()
    /// Messages already checked for offer use, so each is reported once.
    var offerChecked = Set<String>()
    /// External messages whose identifiers were checked for a use, so each is reported once.
    var externalChecked = Set<String>()
    /// (product, locale) pairs already reported as lacking a default.
    var reportedMissingDefaults = Set<String>()

    init(set: ManifestSet, broken: BrokenDocuments) {
        self.set = set
        self.broken = broken
        positions = Dictionary(uniqueKeysWithValues: ManifestKinds.all.map { (ObjectIdentifier($0), $0.positions(in: set.declarations)) })
        messagesByName = positions[ObjectIdentifier(MessageKind.self), default: [:]].mapValues { set.messages[$0] }
        references = ReferenceRecorder(set)
        productsById = Dictionary(set.app.products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        productIds = set.app.products.map(\.id)
        // A misspelt code (en_US) counts as its correct spelling here, so that it is reported once.
        declaredLocales = productsById.mapValues { Set($0.locales.map { AppStoreLocales.canonical($0) ?? $0 }) }
        productLocales = declaredLocales.mapValues { $0.filter(AppStoreLocales.isKnown) }
        messageLocales = messagesByName.mapValues { Set($0.localizations.map(\.locale)) }
        declaredEnvironments = Set(set.app.environments.map(\.environment))
    }

    mutating func report(_ diagnostic: Diagnostic) { diagnostics.append(diagnostic) }

    /// Where the element of `kind` named `name` is in what the set holds of that kind.
    func position<Kind: NamedManifestKind>(of name: String, in kind: Kind.Type) -> Int? {
        positions[ObjectIdentifier(kind)]?[name]
    }

    /// Names suggested for unresolved references; not worth an "unused" warning on top.
    var suggestedNames = Set<String>()

    /// Reports an invalid locale code; returns whether the code was valid.
    @discardableResult
    mutating func checkLocale(_ code: String, at location: SourceLocation, warnUnconfirmed: Bool = false) -> Bool {
        guard let problem = AppStoreLocales.problem(code) else {
            if warnUnconfirmed && AppStoreLocales.isUnconfirmed(code) {
                report(.warning("unconfirmed-locale", at: location,
                                "locale '\(code)' was added to App Store Connect on 2026-03-31; whether the Retention Messaging API accepts it is unconfirmed",
                                hint: "keep it if you need it; if Apple answers 4000164 (invalid locale), remove it until Apple supports it"))
            }
            return true
        }
        report(.error("invalid-locale", at: location, problem.message, hint: problem.hint))
        return false
    }

    mutating func checkLength(_ text: String, limit: Int, what: String, code: String, at location: SourceLocation) {
        let length = RetentionLimits.length(of: text)
        if text.isEmpty {
            report(.error("empty-text", at: location, "\(what) is empty", hint: "Apple requires a non-empty \(what)"))
        } else if let (scalar, position) = TextCheck.firstForbidden(in: text) {
            report(.error("control-character", at: location,
                          "\(what) holds the control character \(TextCheck.name(of: scalar)) at character \(position)",
                          hint: "remove it: Apple shows text as written, and a control character is invisible or breaks the display (in YAML, check escapes like \\e, \\a or \\0 in double-quoted strings)"))
        } else if TextCheck.isBlank(text) {
            report(.error("empty-text", at: location, "\(what) holds only spaces or invisible (zero-width) characters",
                          hint: "Apple requires a non-empty \(what); write text customers can read"))
        } else if length > limit {
            let over = length - limit
            report(.error(code, at: location, "\(what) is \(length) characters long; Apple allows at most \(limit)",
                          hint: "shorten it by \(over) character\(over == 1 ? "" : "s") (lengths count Unicode scalars or UTF-16 units, whichever is more)"))
        }
    }

    /// Whether a reference to `name` should be reported as unresolved (not when its document failed to load).
    func isWorthReporting(_ name: String) -> Bool {
        !(broken.names.contains(name) || broken.unknownKind)
    }

    /// Reports a reference to a message or image that does not exist, with a near miss if there is one.
    mutating func reportUnresolved(_ code: String, noun: String, _ name: String, at location: SourceLocation, candidates: [String]) {
        references.unresolved("no \(noun) named '\(name)'", at: location)
        guard isWorthReporting(name) else { return }
        let suggestion = NearMiss.best(name, in: candidates, maxDistance: NearMiss.distance(for: name))
        if let suggestion { suggestedNames.insert(suggestion) }
        report(.error(code, at: location, "no \(noun) named '\(name)'",
                      hint: suggestion.map { "did you mean '\($0)'?" } ?? NearMiss.hint(for: name, in: candidates, noun: noun)))
    }
}
