public import Experiments
public import Foundation
public import Manifests
public import RetentionMessagingModels
public import Basics
public import CLIKit
import EventStore
import HTTPClient
import Reconciler
public import StateLocations
import StateStore

/// What `results` does besides reading events, for every caller (the command, `plan --results`, the
/// demo): the configuration the events are checked against, from manifests loaded once, and the
/// clock outcomes are dated against.
public enum ResultsOperation {
    /// The rules `manifests` publish to `environment`, as `results` checks the events against them
    /// (sample ratio within a split group's audience, configured arms without exposures, rules not
    /// configured). `source` names where they came from, for the report.
    public static func configuration(_ manifests: ValidatedManifests, environment: Environment, source: String) -> ResultsConfiguration {
        let rules = manifests.rules.filter { $0.isPublished(to: environment) }.map { rule in
            ResultsConfiguration.Rule(flow: rule.flow, rule: rule.name, splitGroup: rule.match.split?.group, percent: rule.match.split?.percent,
                                      audience: rule.audience, notBefore: rule.match.notBefore, notAfter: rule.match.notAfter)
        }
        let guardrails = manifests.set.flows.flatMap { flow in
            flow.guardrails.map { ResultsConfiguration.Guardrail(flow: flow.name, group: $0.group, metric: $0.metric.rawValue, maxDrop: $0.maxDrop) }
        }
        return ResultsConfiguration(source: source, rules: rules, guardrails: guardrails,
                                    messageNames: messageNames(manifests, environment: environment))
    }

    /// Every message identifier the manifests derive for `environment` (and every external message
    /// they declare), by the label plans use: `before-you-go (ja)`. Empty when they cannot be derived.
    static func messageNames(_ manifests: ValidatedManifests, environment: Environment) -> [String: String] {
        guard let desired = try? Identities.derive(manifests, environment: environment) else { return [:] }
        var names: [String: String] = [:]
        for message in desired.messages { names[message.identifier] = message.label }
        for message in desired.externalMessages ?? [] where names[message.identifier] == nil {
            names[message.identifier] = message.label
        }
        return names
    }

    /// The report `retention-sync results --env ENVIRONMENT --as-of NOW` prints from the events in
    /// `folder`, checked against `manifests` (read from `manifestsPath`) when they loaded.
    public static func report(events folder: URL, environment: Environment, now: UTCTime, manifests: ValidatedManifests?,
                              manifestsPath: String) throws -> ResultsReport {
        try ResultsReport.compute(source: FolderEventSource(root: folder), environment: environment.rawValue, now: now,
                                  configuration: manifests.map { configuration($0, environment: environment, source: "manifests in \(manifestsPath)") },
                                  clock: clock(asOf: now))
    }

    /// The clock outcomes must not be dated after: the real time, or `asOf` when that is later — a
    /// report as of a time ahead of this machine's is a rehearsal on an emulator's moved clock, whose
    /// decisions and outcomes both live on that clock.
    public static func clock(asOf: UTCTime) -> UTCTime {
        max(SystemClock().time(), asOf)
    }

    /// The folder to read: the backend's own folder for `location`, or a local copy brought up to date.
    public static func localFolder(_ location: StateLocation, context: CommandContext) async throws(CommandError) -> URL {
        let backend = StateStores.backend(for: location)
        if let folder = backend.localFolder(of: location) { return folder }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent(
            "retention-sync/events/\(Self.copyName(location))", isDirectory: true)
        do {
            let configuration = try ReconcileTarget.transportConfiguration(context)
            let store = try backend.objectStore(at: location, environment: context.environment,
                                                transport: { CurlHTTPClient(configuration: configuration) })
            try await EventMirror.update(copy, from: store)
        } catch {
            throw CommandError("cannot read the events in \(location): \(error)")
        }
        return copy
    }

    /// A folder name for the local copy of a remote location: its bucket and prefix as path components.
    static func copyName(_ location: StateLocation) -> String {
        let text = location.description
        guard let range = text.range(of: "://") else { return text }
        return String(text[range.upperBound...])
    }
}
