import CLIKit
import Crypto
import EventStore
import Foundation
import HTTPClient
import StateLocations
import StateStore
import Operations

/// Where `serve` and `outcomes pull` write decision and outcome events, and how they spool them:
/// one option group, so both write where `results` reads.
struct EventStoreOptions: Sendable {
    static let events = Option.events
    static let spool = Option("--event-spool", value: "DIR", completion: .directory, help: [
        "Local folder for events the store has not taken yet (default: one per",
        "store under $TMPDIR/retention-sync/spool; put it on a volume that outlives restarts)",
    ])
    static let defaultFlushInterval = EventRecorder.Settings.defaultFlushInterval
    static let flushInterval = Option("--flush-interval", value: "SECONDS", of: Seconds.self, default: Seconds(defaultFlushInterval), help: [
        "How often queued events are written (kill -9 loses at most this much)",
    ])
    static let defaultSpoolLimitMB = Double(EventRecorder.Settings.defaultSpoolLimitBytes >> 20)
    static let spoolLimit = Option("--spool-limit", value: "MB", of: Double.self, default: defaultSpoolLimitMB, help: [
        "Spool size at most; past it events are dropped and counted, never silently",
    ])

    static let all = [events, spool, flushInterval, spoolLimit]

    var events: StateLocation?
    var spool: String?
    var flushInterval: Double
    var spoolLimitMB: Double

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> EventStoreOptions {
        // Above 0: a recorder that never flushes, or a spool that holds nothing, would lose every event.
        let flushInterval = try arguments.value(Self.flushInterval, as: Seconds.self, in: Seconds(.leastNonzeroMagnitude)...,
                                                expected: "a number above 0")
        let spoolLimit = try arguments.value(Self.spoolLimit, as: Double.self, in: .leastNonzeroMagnitude..., expected: "a number above 0")
        return EventStoreOptions(events: try arguments.value(Self.events, as: StateLocation.self, relativeTo: context.currentDirectory),
                                 spool: try arguments.value(Self.spool),
                                 flushInterval: flushInterval?.value ?? Self.defaultFlushInterval,
                                 spoolLimitMB: spoolLimit ?? Self.defaultSpoolLimitMB)
    }

    /// `--events` when given, else `fallback` (the state's root); nil when neither names a place.
    func location(fallback: StateLocation?) -> StateLocation? {
        events ?? fallback
    }

    /// The objects under the events' root (a folder, or an S3 prefix with the AWS variables): where
    /// events are recorded and read, and where `facts publish` writes the customer facts.
    /// Refuses a folder that holds no `events` at all: a place that does not exist is a wrong path,
    /// never "no customers". An S3 prefix is not checked here (listing it is the reading itself).
    static func requireEvents(at root: StateLocation) throws(CommandError) {
        if let folder = StateStores.backend(for: root).localFolder(of: root),
           !FileManager.default.fileExists(atPath: folder.appendingPathComponent("events").path) {
            throw CommandError("no events at \(root): serve and outcomes pull write them beside the environment's state "
                               + "(under events/v1), or where their --events points; give --events LOCATION")
        }
    }

    static func objectStore(at root: StateLocation, context: CommandContext) throws(CommandError) -> any BlockingObjectStore {
        do {
            let configuration = try EnvironmentOptions.transportConfiguration(context)
            return try StateStores.backend(for: root).objectStore(at: root, environment: context.environment,
                                                                  transport: { CurlHTTPClient(configuration: configuration) })
        } catch {
            throw CommandError("the event store \(root): \(error)")
        }
    }

    /// The recorder writing to `root`, named `<purpose>-<host>-<random>`.
    func recorder(root: StateLocation, purpose: String, context: CommandContext,
                  onNotice: @escaping @Sendable (String) -> Void) throws(CommandError) -> EventRecorder {
        let store = try Self.objectStore(at: root, context: context)
        // One spool per store by default: what waits there is stored where it belongs, never in another
        // store whose process happens to share the machine.
        let spoolFolder = spool.map { context.url($0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "retention-sync/spool/" + String(Digest.sha256Hex(Array(store.location.utf8)).prefix(16)), isDirectory: true)
        let settings = EventRecorder.Settings(writerId: purpose + "-" + EventRecorder.Settings.defaultWriterId(),
                                              spool: spoolFolder, flushInterval: flushInterval,
                                              spoolLimitBytes: Int64(spoolLimitMB * 1_048_576))
        return EventRecorder(sink: ObjectStoreEventSink(store: store), settings: settings, onNotice: onNotice)
    }

    /// The secret behind every pseudonym, from `RETENTION_SYNC_PSEUDONYM_SECRET`; nil when unset.
    static func pseudonyms(_ context: CommandContext) throws(CommandError) -> PseudonymKey? {
        do {
            return try PseudonymKey.fromEnvironment(context.environment)
        } catch {
            throw CommandError(error.description, exitCode: .usage)
        }
    }

    /// During a rotation, the secret being replaced (`RETENTION_SYNC_PSEUDONYM_SECRET_PREVIOUS`); nil when unset.
    static func previousPseudonyms(_ context: CommandContext, current: PseudonymKey?) throws(CommandError) -> PseudonymKey? {
        do {
            return try PseudonymKey.previousFromEnvironment(context.environment, current: current)
        } catch {
            throw CommandError(error.description, exitCode: .usage)
        }
    }
}
