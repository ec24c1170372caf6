import Crypto
import Foundation
import Reconciler
import RetentionMessaging

extension Option {
    /// The default manifest directory, declared once for every command that reads manifests.
    static let defaultManifests = "manifests"

    /// `--manifests DIR`: one declaration (spelling, completion, default) for every command; each
    /// command says in its own words what it reads there.
    static func manifests(help: [String] = ["The manifest directory"]) -> Option {
        Option("--manifests", value: "DIR", completion: .directory, default: defaultManifests, help: help)
    }
}

/// `--root FILE[,FILE…]`: the certificates Apple's chains must lead to, read the same way by `serve`
/// and `decide`.
enum TrustRootsOption {
    static func load(_ paths: String, context: CommandContext) throws -> [X509Certificate] {
        var roots: [X509Certificate] = []
        for path in paths.split(separator: ",").map(String.init) where !path.isEmpty {
            _ = try readFile(path, what: "the root certificate", context: context)
            do {
                roots += try X509Certificate.load(contentsOfFile: context.url(path).path)
            } catch {
                throw CommandError("\(path): cannot read a root certificate (PEM or DER): \(error.description)")
            }
        }
        guard !roots.isEmpty else { throw CommandError("--root names no certificate file", exitCode: .usage) }
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

/// `--prune-id`, `--rollback-versions` and `--prune-grace`, declared once for `plan` and `apply`.
enum RollbackOptions {
    static let pruneId = Option("--prune-id", value: "ID[,ID…]", help: [
        "Also delete these rollback targets (approved versions a revert would use,",
        "which --prune keeps); implies --prune",
    ])
    static let rollbackVersions = Option("--rollback-versions", value: "N", default: String(PlanOptions.defaultRollbackVersions), help: [
        "Approved earlier versions of each message localization that --prune keeps",
        "for a revert (0 keeps none)",
    ])

    static let pruneGrace = Option("--prune-grace", value: "DAYS", default: String(PlanOptions.defaultPruneGraceDays), help: [
        "Content submitted from a pull request (apply --only-uploads) that no",
        "manifest derives is kept by --prune until DAYS after its last submission",
        "(0 keeps none)",
    ])

    static func graceDays(_ arguments: inout Arguments) throws(CommandError) -> Int {
        try arguments.value(pruneGrace, { Int($0).flatMap { $0 >= 0 ? $0 : nil } }, expected: "a whole number of days, 0 or more")
            ?? PlanOptions.defaultPruneGraceDays
    }

    /// The identifiers `--prune-id` names, lower-cased.
    static func named(_ arguments: inout Arguments) throws(CommandError) -> Set<String> {
        Set((try arguments.value(pruneId) ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
    }

    static func versions(_ arguments: inout Arguments) throws(CommandError) -> Int {
        try arguments.value(rollbackVersions, { Int($0).flatMap { $0 >= 0 ? $0 : nil } }, expected: "a whole number, 0 or more")
            ?? PlanOptions.defaultRollbackVersions
    }
}

/// What `plan` and `apply` were told about deleting: `--prune`, `--prune-force` and the rollback
/// options, read the same way for both.
struct PruneSettings: Sendable {
    var prune: Bool
    var force: Bool
    var named: Set<String>
    var rollbackVersions: Int
    var graceDays: Int

    /// Whether anything may be deleted (`--prune-force` and `--prune-id` imply `--prune`).
    var deletes: Bool { prune || force || !named.isEmpty }

    var planOptions: PlanOptions {
        PlanOptions(prune: deletes, pruneForce: force, pruneNamed: named, rollbackVersions: rollbackVersions, pruneGraceDays: graceDays)
    }

    /// Reads the settings; `prune` and `pruneForce` are the command's own declarations (their help differs).
    static func parse(_ arguments: inout Arguments, prune: Option, pruneForce: Option) throws(CommandError) -> PruneSettings {
        PruneSettings(prune: arguments.flag(prune), force: arguments.flag(pruneForce), named: try RollbackOptions.named(&arguments),
                      rollbackVersions: try RollbackOptions.versions(&arguments), graceDays: try RollbackOptions.graceDays(&arguments))
    }
}
