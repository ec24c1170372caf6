import CLIKit
import StateLocations
import Crypto
import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Operations

extension Option {
    /// The default manifest directory, declared once for every command that reads manifests.
    static let defaultManifests = "manifests"

    /// `--manifests DIR`: one declaration (spelling, completion, default) for every command; each
    /// command says in its own words what it reads there.
    static func manifests(help: [String] = ["The manifest directory"]) -> Option {
        Option("--manifests", value: "DIR", completion: .directory, default: defaultManifests, help: help)
    }

    /// `--events LOCATION`: where the decision and outcome events live, for every command that
    /// writes them (`serve`, `outcomes pull`) or reads them (`results`); one meaning, one declaration.
    static let events = Option("--events", value: "LOCATION", of: StateLocation.self, completion: .directory, help: [
        "Where events live: a folder or s3://bucket/prefix holding events/v1/…",
        "(default: beside the environment's state; serve and outcomes write there, results reads)",
    ])
}

/// `--root FILE[,FILE…]`: the certificates Apple's chains must lead to, declared and read the same
/// way by `serve`, `decide` and `outcomes pull`; each command words its help.
enum TrustRootsOption {
    static func declaration(help: [String]) -> Option {
        Option("--root", value: "FILE[,FILE…]", of: ArgumentList<String>.self, completion: .file, help: help)
    }

    /// The files named, in order; nil when the option is absent.
    static func read(_ arguments: inout Arguments, _ option: Option) throws(CommandError) -> [String]? {
        try arguments.value(option, as: ArgumentList<String>.self)?.elements
    }

    static func load(_ paths: [String], context: CommandContext) throws -> [X509Certificate] {
        var roots: [X509Certificate] = []
        for path in paths {
            _ = try readFile(path, what: "the root certificate", context: context)
            do {
                roots += try X509Certificate.load(contentsOfFile: context.url(path).path)
            } catch {
                throw CommandError("\(path): cannot read a root certificate (PEM or DER): \(error.description)")
            }
        }
        return roots
    }
}

/// The In-App Purchase key that signs promotional offers, read from the environment exactly as
/// `plan` and `apply` read it, by `serve` and `decide` alike.
enum SigningKeyOption {
    static let variables = [Credentials.keyIdVariable, Credentials.issuerIdVariable, Credentials.privateKeyVariable,
                            Credentials.privateKeyFileVariable]

    /// The key, or nil when none of its variables is set; `unsetHint` follows an error.
    static func credentials(bundleId: String, context: CommandContext, unsetHint: String) throws(CommandError) -> Credentials? {
        if variables.allSatisfy({ (context.environment[$0] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
            return nil
        }
        var environment = context.environment
        if let file = environment[Credentials.privateKeyFileVariable], !file.isEmpty {
            environment[Credentials.privateKeyFileVariable] = context.url(file).path
        }
        do {
            return try Credentials.fromEnvironment(environment, bundleId: bundleId)
        } catch {
            throw CommandError("signing credentials: \(error.description)\(unsetHint)")
        }
    }
}

/// `--prune`, `--prune-force`, `--prune-id`, `--rollback-versions`, `--prune-grace` and
/// `--allow-delete-defaults`, declared once for `plan` and `apply` and read into one `PruneSettings`.
enum PruneOptions {
    /// The share of the remote content a prune may delete without `--prune-force`, as help words it.
    static let protectedShare = "\(Int((PlanOptions.pruneProtectionShare * 100).rounded()))%"

    /// `--prune`; each command says what it does with it (plan plans, apply deletes).
    static func prune(help: [String]) -> Option { Option("--prune", help: help) }
    static let pruneForce = Option("--prune-force", help: [
        "Allow a prune to delete more than \(protectedShare) of the remote messages and",
        "images; implies --prune",
    ])
    static let pruneId = Option("--prune-id", value: "ID[,ID…]", help: [
        "Also delete these rollback targets, external messages or external images",
        "(which --prune keeps), by identifier; implies --prune",
    ])
    static let rollbackVersions = Option("--rollback-versions", value: "N", of: Int.self, default: PlanOptions.defaultRollbackVersions, help: [
        "Approved earlier versions of each message localization that --prune keeps",
        "for a revert (0 keeps none)",
    ])
    static let pruneGrace = Option("--prune-grace", value: "DAYS", of: Int.self, default: PlanOptions.defaultPruneGraceDays, help: [
        "Content submitted from a pull request (apply --only-uploads) that no",
        "manifest derives is kept by --prune until DAYS after its last submission",
        "(0 keeps none)",
    ])

    static let allowDeleteDefaults = Option("--allow-delete-defaults", help: [
        "Allow deleting more than \(protectedShare) of the defaults Apple holds for the",
        "declared pairs (the manifests no longer assign them); prunes nothing",
    ])

    /// In help order, after the command's own `--prune`.
    static let following = [pruneForce, pruneId, rollbackVersions, pruneGrace, allowDeleteDefaults]
}

extension PruneSettings {
    /// Reads the settings; `prune` is the command's own declaration (its help differs).
    static func parse(_ arguments: inout Arguments, prune: Option) throws(CommandError) -> PruneSettings {
        // Identifiers are compared lower-cased; an empty list names nothing to delete.
        let named = (try arguments.value(PruneOptions.pruneId) ?? "").split(separator: ",")
        for item in named.map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty && !UUIDText.isUUID(item) {
            throw CommandError("--prune-id: '\(item)' is not an identifier; give the UUID the plan's inventory lists "
                               + "(for an external message or image, its identifiers: entry in the manifests)", exitCode: .usage)
        }
        return PruneSettings(
            prune: arguments.flag(prune), force: arguments.flag(PruneOptions.pruneForce),
            allowDeleteDefaults: arguments.flag(PruneOptions.allowDeleteDefaults),
            named: Set(named.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }),
            rollbackVersions: try arguments.value(PruneOptions.rollbackVersions, as: Int.self, in: 0..., expected: "a whole number, 0 or more")
                ?? PlanOptions.defaultRollbackVersions,
            graceDays: try arguments.value(PruneOptions.pruneGrace, as: Int.self, in: 0..., expected: "a whole number of days, 0 or more")
                ?? PlanOptions.defaultPruneGraceDays)
    }
}
