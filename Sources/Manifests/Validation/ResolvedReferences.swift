public import Basics

/// Every name a manifest uses to refer to another element, as the validator records it while it
/// checks: positions in the arrays of the set being checked. They never leave validation:
/// `ReferenceRecorder.resolved(in:)` turns them into resolved values (`ResolvedMessage`,
/// `ResolvedDefault`, `ResolvedRule`) that carry the elements themselves.
enum ResolvedReferences {
    /// An image a message localization shows: a managed image (its position in `ManifestSet.images`)
    /// or an external one (its position in `ManifestSet.externalImages`, one identifier per
    /// environment). A kind a localization can show is a case here, so every place that derives an
    /// upload body must say what it does with it.
    enum ImageTarget: Sendable, Hashable {
        case image(Int)
        case external(Int)
    }

    /// The images one message localization shows.
    struct LocalizationImages: Sendable, Hashable {
        /// The localization's own image.
        var image: ImageTarget?
        /// One per bullet point, in order.
        var bulletPoints: [ImageTarget]
    }

    /// One localization of one message: positions in `ManifestSet.messages` and in its `localizations`.
    struct LocalizationPosition: Sendable, Hashable {
        var message: Int
        var localization: Int
    }

    /// What a default assigns: one localization of a managed message, or an external message
    /// (its position in `ManifestSet.externalMessages`), which has one identifier for every locale.
    enum DefaultTarget: Sendable, Hashable {
        case localization(LocalizationPosition)
        case external(Int)
    }
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
    /// Every managed message, in the set's order, with the images each localization shows.
    public let messages: [ResolvedMessage]
    /// Every default, in the set's order, with what it assigns.
    public let defaults: [ResolvedDefault]
    /// Every flow's rules in evaluation order (flows as written, then rules as written), resolved.
    public let rules: [ResolvedRule]

    init(set: ManifestSet, messages: [ResolvedMessage], defaults: [ResolvedDefault], rules: [ResolvedRule]) {
        self.set = set
        self.messages = messages
        self.defaults = defaults
        self.rules = rules
    }

    public var app: AppManifest { self.set.app }

    /// Every locale fallback the flows declare, `from` → `to`; when two flows name the same `from`,
    /// the first flow's wins.
    public var localeFallbacks: [String: String] {
        var fallbacks: [String: String] = [:]
        for flow in set.flows {
            for (from, to) in flow.localeFallbacks where fallbacks[from] == nil { fallbacks[from] = to }
        }
        return fallbacks
    }
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
        func shown(_ target: ResolvedReferences.ImageTarget) -> ShownImage {
            switch target {
            case .image(let position): .image(set.images[position])
            case .external(let position): .external(set.externalImages[position])
            }
        }
        let messages = zip(set.messages, images).map { message, localizations in
            ResolvedMessage(message: message, localizations: zip(message.localizations, localizations).map { localization, images in
                ResolvedLocalization(localization: localization, image: images.image.map(shown), bulletPoints: images.bulletPoints.map(shown))
            })
        }
        let defaults = zip(set.defaults, assignments).map { assignment, target in
            switch target {
            case .localization(let position):
                let message = set.messages[position.message]
                return ResolvedDefault(assignment: assignment,
                                       assigns: .localization(message, locale: message.localizations[position.localization].locale))
            case .external(let position):
                return ResolvedDefault(assignment: assignment, assigns: .external(set.externalMessages[position]))
            }
        }
        return .success(ValidatedManifests(set: set, messages: messages, defaults: defaults, rules: resolvedRules))
    }
}
