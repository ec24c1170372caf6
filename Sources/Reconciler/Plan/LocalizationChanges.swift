import Foundation
public import RetentionMessagingModels
public import StateStore

/// A message localization whose text a plan changes, as a reviewer compares it: the version the last
/// apply of the main branch recorded in the state (before) beside the version the manifests derive
/// now (after). What `plan --preview` draws.
public struct LocalizationChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// No earlier version of this message and locale is recorded: the manifests add it.
        case new
        /// The manifests derive another version than the one recorded.
        case changed
        /// The main branch's last apply derived it; these manifests no longer do.
        case removed
        /// The plan uploads the very version the main branch recorded again (Apple no longer holds
        /// it): before and after are the same text.
        case uploadedAgain = "uploaded_again"
    }

    public var name: String
    public var locale: String
    public var kind: Kind
    /// Nil for `new`.
    public var before: LocalizationVersion?
    /// Nil for `removed`.
    public var after: LocalizationVersion?
    /// What differs, field by field (`header`, `body`, `image`, `bullet 2`, …); empty for new and removed.
    public var fields: [FieldChange]
    /// The state of the plan's upload of `after`; nil when the plan uploads nothing for it (Apple
    /// already holds that version, submitted from a pull request earlier, or it is removed).
    public var upload: ActionState?

    public init(name: String, locale: String, kind: Kind, before: LocalizationVersion?, after: LocalizationVersion?,
                fields: [FieldChange] = [], upload: ActionState? = nil) {
        self.name = name
        self.locale = locale
        self.kind = kind
        self.before = before
        self.after = after
        self.fields = fields
        self.upload = upload
    }
}

/// One version of a message localization: its identifier and, when known, the body it was uploaded with.
public struct LocalizationVersion: Sendable, Hashable {
    public var identifier: String
    /// The product the version is limited to, or `*`.
    public var productScope: String
    /// Nil when the state record kept no upload body (records written before it did).
    public var body: UploadMessageRequestBody?

    public init(identifier: String, productScope: String, body: UploadMessageRequestBody?) {
        self.identifier = identifier
        self.productScope = productScope
        self.body = body
    }
}

extension PlanResult {
    /// The message localizations this plan changes, sorted by message name, then locale.
    public var localizationChanges: [LocalizationChange] {
        LocalizationChange.list(plan: plan, desired: desired, document: remote.state?.document)
    }
}

extension LocalizationChange {
    /// Every localization the plan uploads, every derived localization whose version is not the one
    /// the main branch's last apply recorded (`in_main`, e.g. a pull request's earlier submission),
    /// and every localization the main branch recorded that the manifests no longer derive.
    /// Before is the main branch's recorded version; without one, the version the plan's text
    /// changes replace; without either, the localization is new.
    public static func list(plan: Plan, desired: DesiredState, document: StateDocument?) -> [LocalizationChange] {
        struct Key: Hashable, Comparable {
            var name: String
            var locale: String
            static func < (lhs: Key, rhs: Key) -> Bool { (lhs.name, lhs.locale) < (rhs.name, rhs.locale) }
        }
        let records = (document?.content ?? []).filter { $0.kind == .message }.sorted { $0.identifier < $1.identifier }
        let recordsByIdentifier = Dictionary(records.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        var main: [Key: ContentRecord] = [:]
        for record in records where record.inMain == true {
            guard let locale = record.locale else { continue }
            if main[Key(name: record.name, locale: locale)] == nil { main[Key(name: record.name, locale: locale)] = record }
        }
        var uploads: [String: PlanAction] = [:]
        for action in plan.actions {
            if case .upload(let message)? = action.change.as(MessageChange.self) { uploads[message.identifier] = action }
        }

        var changes: [LocalizationChange] = []
        var derived = Set<Key>()
        for message in desired.messages {
            let key = Key(name: message.name, locale: message.locale)
            derived.insert(key)
            let upload = uploads[message.identifier]
            let recorded = main[key] ?? upload?.textChanges.flatMap { recordsByIdentifier[$0.replaces] }
            let after = LocalizationVersion(identifier: message.identifier, productScope: message.productScope, body: message.body)
            guard let recorded else {
                if let upload { changes.append(LocalizationChange(name: message.name, locale: message.locale, kind: .new, before: nil, after: after, upload: upload.state)) }
                continue
            }
            let same = recorded.identifier == message.identifier
            // The main branch's own version, which Apple holds: nothing to show.
            if same && upload == nil { continue }
            let before = version(of: recorded)
            changes.append(LocalizationChange(name: message.name, locale: message.locale, kind: same ? .uploadedAgain : .changed,
                                              before: before, after: after,
                                              fields: before.body.map { TextChanges.compare($0, message.body) } ?? [],
                                              upload: upload?.state))
        }
        for (key, record) in main where !derived.contains(key) {
            changes.append(LocalizationChange(name: key.name, locale: key.locale, kind: .removed, before: version(of: record), after: nil))
        }
        return changes.sorted { ($0.name, $0.locale) < ($1.name, $1.locale) }
    }

    static func version(of record: ContentRecord) -> LocalizationVersion {
        let body = record.uploadBody.flatMap { try? JSONDecoder().decode(UploadMessageRequestBody.self, from: Data($0.utf8)) }
        return LocalizationVersion(identifier: record.identifier, productScope: record.productScope ?? "*", body: body)
    }
}
