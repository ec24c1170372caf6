import Basics
import Experiments
import Foundation
import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// The plan's JSON (`plan --format json`, `--out`): snake_case keys documented in the README,
/// `format_version` in semver, sorted keys. A projection of the typed plan, kept apart from it so
/// the plan can change shape without changing these bytes; `SavedPlan` reads it back.
public enum PlanJSON {
    public static func encode(_ plan: Plan) throws -> String {
        try encode(plan, evidence: nil)
    }

    /// With `plan --results`, the evidence is the document's `evidence` member; without it, the bytes
    /// are those of the plan alone.
    public static func encode(_ plan: Plan, evidence: PlanEvidence?) throws -> String {
        var document = Document(plan)
        document.evidence = evidence.map(EvidenceMember.init)
        return String(decoding: try CanonicalJSON.encodePretty(document), as: UTF8.self) + "\n"
    }

    /// `evidence`: `status` (`results`, `no_decisions`, `no_rule_changed`, `no_state_store`,
    /// `unreadable`), the `rules` the plan changes, a `note` when there are no results, and the
    /// `results` document (as `results --format json` writes it) when there are.
    struct EvidenceMember: Encodable {
        var status: String
        var rules: [String]?
        var note: String?
        var results: ResultsReport?

        init(_ evidence: PlanEvidence) {
            status = evidence.status
            note = evidence.sentence
            switch evidence {
            case .noDecisions(let rules): self.rules = rules
            case .results(let report, let rules): (self.rules, results) = (rules, report)
            case .noRuleChanged, .noStateStore, .unreadable: break
            }
        }
    }

    struct Document: Encodable {
        var formatVersion: String
        var environment: Environment
        var bundleId: String
        var prune: Bool
        var converged: Bool
        var health: Health
        var summary: PlanSummary
        var actions: [Action]
        var problems: [PlanProblem]
        var inventory: [Inventory]
        var estimate: Estimate
        var apiCalls: Int
        var fingerprints: Fingerprints
        var reviewAges: [Age]?
        var rollbackVersions: Int?
        var pruneGraceDays: Int?
        var missingState: MissingState?
        var pruneRead: PruneRead?
        var warnings: [Warning]?
        var inherited: [Inherited]?
        var evidence: EvidenceMember?

        enum CodingKeys: String, CodingKey {
            case formatVersion = "format_version", environment, bundleId = "bundle_id", prune, converged, health
            case summary, actions, problems, inventory, estimate, apiCalls = "api_calls", fingerprints
            case reviewAges = "review_ages", rollbackVersions = "rollback_versions", missingState = "missing_state"
            case pruneGraceDays = "prune_grace_days", pruneRead = "prune_read", warnings, inherited, evidence
        }

        init(_ plan: Plan) {
            formatVersion = plan.formatVersion
            environment = plan.environment
            bundleId = plan.bundleId
            prune = plan.prune
            converged = plan.converged
            health = plan.health
            summary = plan.summary
            actions = plan.actions.map(Action.init)
            problems = plan.problems
            inventory = plan.inventory.map(Inventory.init)
            estimate = plan.estimate
            apiCalls = plan.apiCalls
            fingerprints = plan.fingerprints
            reviewAges = plan.reviewAges.isEmpty ? nil : plan.reviewAges.map(Age.init)
            rollbackVersions = plan.rollbackVersions
            pruneGraceDays = plan.pruneGraceDays
            missingState = plan.missingState
            pruneRead = plan.pruneRead
            warnings = plan.warnings.isEmpty ? nil : plan.warnings.map(Warning.init)
            inherited = plan.inherited.isEmpty ? nil : plan.inherited.map(Inherited.init)
        }
    }

    /// What the environment held before these manifests that needs a person (absent when nothing).
    struct Inherited: Encodable {
        var kind: String
        /// `product/locale`, each pair it concerns.
        var pairs: [String]
        var messageIdentifier: String?
        var message: String

        enum CodingKeys: String, CodingKey { case kind, pairs, messageIdentifier = "message_identifier", message }

        init(_ problem: InheritedProblem) {
            kind = problem.kind
            message = problem.description
            switch problem {
            case .defaultShowsRejected(let pair, let identifier): (pairs, messageIdentifier) = ([pair.description], identifier)
            case .noDefault(let missing): (pairs, messageIdentifier) = (missing.map(\.description), nil)
            }
        }
    }

    /// What no action will change at Apple (absent when nothing).
    struct Warning: Encodable {
        var kind: String
        var field: String
        var message: String
        /// For `realtime_url_removed`: the URL the state recorded, and the one Apple keeps.
        var recorded: String?
        var held: String?

        init(_ warning: PlanWarning) {
            kind = warning.kind
            field = warning.field
            message = PlanWording.warning(warning)
            switch warning {
            case .realtimeURLRemoved(_, let recorded, let held): (self.recorded, self.held) = (recorded, held)
            }
        }
    }

    /// How long derived content has been PENDING or REJECTED (format 1.1).
    struct Age: Encodable {
        var kind: ReviewItem.Kind
        var identifier: String
        var label: String
        var state: ReviewState
        var since: String?
        var days: Int?
        var flagged: Bool

        init(_ age: ReviewAge) {
            kind = age.kind
            identifier = age.identifier
            label = age.label
            state = age.state
            since = age.since.map(StateTime.format)
            days = age.days
            flagged = age.flagged
        }
    }

    /// One action; fields that do not apply to its kind are absent.
    struct Action: Encodable {
        var id: ActionID
        var kind: ActionKind
        var state: ActionState
        var reason: String
        var waitingFor: [ReviewItem]?
        var error: String?
        var identifier: String?
        var name: String?
        var locale: String?
        var imageSize: ImageSize?
        var productId: String?
        var messageIdentifier: String?
        var currentMessageIdentifier: String?
        var url: String?
        var currentURL: String?
        var snapshotDigest: String?
        var currentSnapshotDigest: String?
        var rules: [RuleOutcome]?
        var splitGroups: [SplitGroupChange]?
        var dependsOn: [ActionID]?
        var replaces: String?
        var textChanges: [FieldChange]?

        enum CodingKeys: String, CodingKey {
            case id, kind, state, reason, waitingFor = "waiting_for", error, identifier, name, locale
            case imageSize = "image_size", productId = "product_id", messageIdentifier = "message_identifier"
            case currentMessageIdentifier = "current_message_identifier", url, currentURL = "current_url"
            case snapshotDigest = "snapshot_digest", currentSnapshotDigest = "current_snapshot_digest", rules
            case splitGroups = "split_groups"
            case dependsOn = "depends_on", replaces, textChanges = "text_changes"
        }

        init(_ action: PlanAction) {
            id = action.id
            kind = action.kind
            state = action.state
            reason = PlanWording.reason(action.reason)
            waitingFor = action.waitingFor.isEmpty ? nil : action.waitingFor
            error = action.error.map(PlanWording.error)
            dependsOn = action.dependsOn.isEmpty ? nil : action.dependsOn
            replaces = action.textChanges?.replaces
            textChanges = action.textChanges?.fields
            let fields = action.change.fields
            identifier = fields.identifier
            name = fields.name
            locale = fields.locale
            imageSize = fields.imageSize
            productId = fields.productId
            messageIdentifier = fields.messageIdentifier
            currentMessageIdentifier = fields.currentMessageIdentifier
            url = fields.url
            currentURL = fields.currentURL
            snapshotDigest = fields.snapshotDigest
            currentSnapshotDigest = fields.currentSnapshotDigest
            rules = fields.rules
            splitGroups = fields.splitGroups
        }
    }

    struct Inventory: Encodable {
        var kind: InventoryItem.Kind
        var identifier: String
        var state: ReviewState
        var label: InventoryItem.Label
        var name: String?
        var usedBy: [String]
        var prune: String
        /// Only for content submitted from pull requests.
        var submittedBy: [String]?
        var keptUntil: String?

        enum CodingKeys: String, CodingKey {
            case kind, identifier, state, label, name, usedBy = "used_by", prune
            case submittedBy = "submitted_by", keptUntil = "kept_until"
        }

        init(_ item: InventoryItem) {
            kind = item.kind
            identifier = item.identifier
            state = item.state
            label = item.label
            name = item.name
            usedBy = item.usedBy.map(\.description)
            prune = PlanWording.prune(item.prune)
            submittedBy = item.submittedBy.isEmpty ? nil : item.submittedBy
            if case .withinGrace(let until) = item.prune { keptUntil = StateTime.format(until) }
        }
    }
}
