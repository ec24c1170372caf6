public import Basics

/// Every name a manifest uses to refer to another element, as the validator resolved it: the one
/// place a written name becomes the element it names. Positions index the arrays of the set the
/// references were resolved in; `ValidatedManifests` keeps the two together so they cannot drift.
public struct ResolvedReferences: Sendable, Hashable {
    /// An image a message localization shows: a managed image (its position in `ManifestSet.images`)
    /// or an external one (its position in `ManifestSet.externalImages`, one identifier per
    /// environment). A kind a localization can show is a case here, so every place that derives an
    /// upload body must say what it does with it.
    public enum ImageTarget: Sendable, Hashable {
        case image(Int)
        case external(Int)
    }

    /// The images one message localization shows.
    public struct LocalizationImages: Sendable, Hashable {
        /// The localization's own image.
        public var image: ImageTarget?
        /// One per bullet point, in order.
        public var bulletPoints: [ImageTarget]
    }

    /// One localization of one message: positions in `ManifestSet.messages` and in its `localizations`.
    public struct LocalizationPosition: Sendable, Hashable {
        public var message: Int
        public var localization: Int
    }

    /// What a default assigns: one localization of a managed message, or an external message
    /// (its position in `ManifestSet.externalMessages`), which has one identifier for every locale.
    public enum DefaultTarget: Sendable, Hashable {
        case localization(LocalizationPosition)
        case external(Int)
    }

    /// Per message, per localization, in the set's order.
    public var localizationImages: [[LocalizationImages]]
    /// Per entry of `ManifestSet.defaults`: what it assigns.
    public var defaults: [DefaultTarget]
}

/// A reference that names nothing, worded as the validator reports it.
public struct UnresolvedReference: Error, Sendable, Hashable, CustomStringConvertible {
    public var location: SourceLocation?
    public var message: String

    public var description: String { location.map { "\($0): \(message)" } ?? message }
}

/// A manifest set whose every reference resolved, with the resolutions.
public struct ValidatedManifests: Sendable {
    public let set: ManifestSet
    public let references: ResolvedReferences
    /// Every flow's rules in evaluation order (flows as written, then rules as written), resolved.
    public let rules: [ResolvedRule]

    init(set: ManifestSet, references: ResolvedReferences, rules: [ResolvedRule]) {
        self.set = set
        self.references = references
        self.rules = rules
    }

    public var app: AppManifest { self.set.app }
}

/// What one validation pass found: every diagnostic, and the references when all of them resolved.
public struct ManifestCheck: Sendable {
    public var diagnostics: [Diagnostic]
    /// The set with its references, or the first reference that names nothing.
    public var validated: Result<ValidatedManifests, UnresolvedReference>

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// The resolutions a validation pass gathers while it checks, slot by slot.
struct ReferenceRecorder {
    var localizationImages: [[ResolvedReferences.LocalizationImages?]]
    var defaults: [ResolvedReferences.DefaultTarget?]
    /// Per flow, per rule: what its response shows; nil when it names nothing.
    var rules: [[ResolvedRule.Shows?]]
    /// Rules whose response names a message, so a nil slot there means unresolved.
    var ruleNamesMessage: [[Bool]]
    var firstUnresolved: UnresolvedReference?

    init(_ set: ManifestSet) {
        localizationImages = set.messages.map { Array(repeating: nil, count: $0.localizations.count) }
        defaults = Array(repeating: nil, count: set.defaults.count)
        rules = set.flows.map { Array(repeating: nil, count: $0.rules.count) }
        ruleNamesMessage = set.flows.map { $0.rules.map { $0.response.messageName != nil } }
    }

    mutating func unresolved(_ message: String, at location: SourceLocation?) {
        if firstUnresolved == nil { firstUnresolved = UnresolvedReference(location: location, message: message) }
    }

    func resolved(in set: ManifestSet) -> Result<ValidatedManifests, UnresolvedReference> {
        if let firstUnresolved { return .failure(firstUnresolved) }
        var images: [[ResolvedReferences.LocalizationImages]] = []
        for slots in localizationImages {
            var resolved: [ResolvedReferences.LocalizationImages] = []
            for slot in slots {
                guard let slot else { return .failure(UnresolvedReference(location: nil, message: "a message localization was not checked")) }
                resolved.append(slot)
            }
            images.append(resolved)
        }
        var assignments: [ResolvedReferences.DefaultTarget] = []
        for slot in defaults {
            guard let slot else { return .failure(UnresolvedReference(location: nil, message: "a default was not checked")) }
            assignments.append(slot)
        }
        for (flow, slots) in rules.enumerated() {
            for (rule, slot) in slots.enumerated() where slot == nil && ruleNamesMessage[flow][rule] {
                return .failure(UnresolvedReference(location: nil, message: "a flow rule was not checked"))
            }
        }
        var resolvedRules: [ResolvedRule] = []
        for (flow, slots) in zip(set.flows, rules) {
            for (rule, shows) in zip(flow.rules, slots) {
                resolvedRules.append(ResolvedRule(flow: flow.name, name: rule.name, match: rule.match, response: rule.response,
                                                  shows: shows, location: rule.location))
            }
        }
        return .success(ValidatedManifests(set: set, references: ResolvedReferences(localizationImages: images, defaults: assignments),
                                           rules: resolvedRules))
    }
}
