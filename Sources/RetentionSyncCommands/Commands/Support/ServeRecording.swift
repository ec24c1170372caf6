import CLIKit
import EventStore
import Foundation
import HTTPClient
import HTTPCore
import RealtimeServer
import RetentionMessagingModels
import StateLocations
import StateStore
import Operations

/// `serve`'s decision recording and notification forwarding, set up from its options.
enum ServeRecording {
    /// The recording, started; nil (with a warning saying why) when serve records nothing.
    static func start(_ options: ServeCommand.Options, sources: [SnapshotSourceOptions.Resolved],
                      context: CommandContext) throws(CommandError) -> RealtimeService.Recording? {
        let console = context.console
        let current = try EventStoreOptions.pseudonyms(context)
        let previous = try EventStoreOptions.previousPseudonyms(context, current: current)
        guard let pseudonyms = current else {
            console.error("warning: \(PseudonymKey.environmentVariable) is not set: decisions are not recorded and notifications "
                          + "are not accepted, so results has nothing to report (answering is unchanged); set it to the same secret "
                          + "on every replica and in the outcomes job (openssl rand -hex 32)")
            return nil
        }
        let roots = Set(sources.compactMap(root(of:)))
        if options.events.events == nil, roots.count > 1 {
            throw CommandError("the environments' states live in different places (\(roots.map(\.description).sorted().joined(separator: ", "))); "
                               + "give --events LOCATION for the events of both", exitCode: .usage)
        }
        guard let root = options.events.location(fallback: roots.first) else {
            console.error("warning: a snapshot file has no state beside it: decisions are not recorded; give --events LOCATION")
            return nil
        }
        let recorder = try options.events.recorder(root: root, purpose: "serve", context: context) { notice in
            console.error(#"{"event":"events","message":"# + JSONLogText.string(notice) + "}")
        }
        let named = options.events.events != nil ? "--events \(root)" : "the events folder \(root) (beside the state; --events moves it)"
        switch root {
        case .file(let path):
            // A folder that cannot be written would never take an event: serve would look ready while
            // every decision piled up in the spool. Found now, it is a configuration error.
            if let problem = probe(folder: context.url(path).appendingPathComponent("events")) {
                throw CommandError("\(named) cannot be written: \(problem). serve records every decision there; "
                                   + "give --events a folder this user can write (it is created when missing)", exitCode: .configuration)
            }
        case .s3:
            // A store on the network may be down for a while by design: the spool takes the events until it answers.
            console.print("events go to \(root) from the first flush; while it does not answer they wait in the spool "
                          + "\(recorder.settings.spool.path), and /readyz and /metrics (retention_sync_event_store_up 0) say so")
        }
        // The customer facts tables `facts publish` writes beside the events, polled like the snapshot.
        let facts = try EventStoreOptions.objectStore(at: root, context: context)
        recorder.start()
        console.print("recording decisions to \(root) (pseudonym key \(pseudonyms.keyId), spool \(recorder.settings.spool.path)); "
                      + "customer facts from \(root)/facts/v1 and the notifications received")
        if let previous {
            console.print("rotating: outcomes are also recorded under the previous pseudonym key \(previous.keyId), until "
                          + "\(PseudonymKey.previousEnvironmentVariable) is removed")
        }
        var recording = RealtimeService.Recording(recorder: recorder, pseudonyms: pseudonyms, facts: facts)
        recording.previousPseudonyms = previous
        return recording
    }

    /// Writes and deletes a marker file in `folder` (made when missing), as a segment would be
    /// written; returns why that failed, in the tool's words, or nil.
    static func probe(folder: URL) -> String? {
        let marker = folder.appendingPathComponent(".serve-probe-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0 ... .max))")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            return WriteProblem.reason(writing: marker, error: error)
        }
        guard FileManager.default.createFile(atPath: marker.path, contents: Data("probe\n".utf8)) else {
            return WriteProblem.reason(writing: marker)
        }
        try? FileManager.default.removeItem(at: marker)
        return nil
    }

    /// The folder or prefix the state of `source` lives in.
    static func root(of source: SnapshotSourceOptions.Resolved) -> StateLocation? {
        switch source.place {
        case .file(let path):
            return .file(path: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        case .store(let location, _):
            return StateStores.backend(for: location).root(of: location)
        }
    }

    /// Forwards each verified notification's body to `target` (see `NotificationForwarder`).
    static func forwarder(_ target: URL?, context: CommandContext) throws(CommandError) -> (@Sendable (Data) -> Void)? {
        guard let target else { return nil }
        let console = context.console
        let forwarder = NotificationForwarder(target: target, transport: CurlHTTPClient(configuration: try EnvironmentOptions.transportConfiguration(context)),
                                              log: { console.error($0) })
        return { forwarder.forward($0) }
    }
}
