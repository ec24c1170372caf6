import Basics
import Foundation
import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// The words for the plan's typed values, shared by the plan's JSON and its terminal and
/// Markdown views. Hints name the commands and flags that fix a problem.
public enum PlanWording {
    static func reason(_ reason: ActionReason) -> String {
        var text: String
        switch reason.cause {
        case .imageNotUploaded(let name, let environment):
            text = "image '\(name)' is not in \(environment.rawValue) yet"
        case .messageNotUploaded(let name, let locale, let version, let environment):
            text = "message '\(name)' (\(locale)) version \(version) is not in \(environment.rawValue) yet"
        case .noDefault(let pair, let assigned):
            text = "no default is configured for \(pair); the manifests assign '\(assigned)'"
        case .otherDefault(let pair, let assigned):
            text = "the default for \(pair) is another message; the manifests assign '\(assigned)'"
        case .defaultNoLongerAssigned(let pair):
            text = "the manifests no longer assign a default for \(pair)"
        case .noSnapshotPublished(let waiting):
            text = "no snapshot is published yet" + waitingRules(waiting)
        case .rulesChanged(let changed, let waiting):
            text = "\(rules(changed)) changed since the published snapshot" + waitingRules(waiting)
        case .rulesWaiting(let count):
            text = "\(rules(count)) changed"
        case .noRealtimeURL:
            text = "no realtime URL is configured"
        case .otherRealtimeURL:
            text = "the configured realtime URL differs"
        case .unusedMessage:
            text = "no manifest derives it and nothing in use refers to it"
        case .namedImage(let unknown):
            text = "named with --prune-id, and no message these manifests derive shows it"
                + (unknown == 0 ? "" : "; \(unknown) message\(unknown == 1 ? "" : "s") of unknown content remain: if one shows it, Apple refuses and apply keeps it")
        case .unusedImage:
            text = "no manifest derives it and every message that could use it is known or deleted first"
        }
        switch reason.wait {
        case nil:
            break
        case .sameApply:
            text += "; waiting for this apply's uploads, which sandbox approves at once, so apply does it in the same run"
        case .review(let serving):
            text += "; waiting for review (\(meanwhile(serving)))"
        case .newVersion(let serving):
            text += "; waiting for a new version of content App Review rejected after the main branch began using it (\(meanwhile(serving)))"
        case .performanceTest:
            text += "; waiting for a sandbox performance test to pass: Apple refused this production realtime URL until one has (403 4030026); run '\(PerformanceTestView.invocation)', then apply"
        }
        return text
    }

    static func meanwhile(_ serving: ActionReason.Serving) -> String {
        switch serving {
        case .nothingYet: "no default is shown until then"
        case .currentDefault: "the current default keeps serving until then"
        case .publishedSnapshot: "the published snapshot keeps serving until then"
        }
    }

    static func rules(_ count: Int) -> String { "\(count) rule\(count == 1 ? "" : "s")" }

    static func waitingRules(_ count: Int) -> String { count == 0 ? "" : "; \(rules(count)) wait\(count == 1 ? "s" : "") for review" }

    /// What no action will change, then what to do.
    public static func warning(_ warning: PlanWarning) -> String {
        switch warning {
        case .realtimeURLRemoved:
            "\(warning). Declare the URL you want in the App manifest (the vendor's, to roll back)"
        }
    }

    /// What is wrong, then what to do.
    static func error(_ error: ActionError) -> String {
        switch error {
        case .overCap(let kind, _, _, _):
            "\(error); delete unused \(kind.rawValue)s (plan --prune) first"
        case .pictureOverCap:
            "\(error); delete unused images (plan --prune) first"
        case .usesRejected:
            "\(error); change that content in the manifests"
        case .pruneProtection:
            "\(error); check the inventory, then run again with --prune-force"
        case .defaultsProtection:
            "\(error); if a manifest was lost (an imported-*.yaml file removed), restore it; if these defaults "
                + "should go, run again with --allow-delete-defaults"
        case .externalNotAtApple(.message, _, _, _):
            "\(error); check its identifier in the ExternalMessage manifest"
        case .externalNotAtApple(.image, _, _, _):
            "\(error); check its identifier in the ExternalImage manifest"
        case .externalImageSize(_, _, _, let required, _):
            "\(error); show a \(required.rawValue) image there, or check the ExternalImage's identifier"
        }
    }

    static func prune(_ verdict: PruneVerdict) -> String {
        switch verdict {
        case .deletable: "deleted by --prune"
        case .inUse: "kept: in use"
        case .mayBeShownByUnknownMessages(let count):
            "kept: \(count) message\(count == 1 ? "" : "s") of unknown content remain and may use it"
        case .rollbackTarget:
            "kept: an approved version a revert would use (delete it with --prune-id)"
        case .withinGrace(let until):
            "kept until \(until.formatted(.date)): submitted from a pull request within --prune-grace"
        case .external:
            "kept: external (content unknown), deleted only when named with --prune-id"
        }
    }

    /// The hint for a reconciler error, worded with the command that helps.
    static func hint(_ error: ReconcilerError) -> String {
        switch error.hint {
        case .validate?: " (run 'retention-sync validate' for every problem)"
        case .planAgain?: "; run 'retention-sync plan --out FILE' again"
        case .configureStateStore?: ", or pass --state-store LOCATION"
        case nil: ""
        }
    }

    /// A reconciler error as a person reads it: what, where, and what to do.
    public static func describe(_ error: ReconcilerError) -> String { error.description + hint(error) }
}
