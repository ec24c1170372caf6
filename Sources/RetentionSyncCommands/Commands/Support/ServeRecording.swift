import CLIKit
import EventStore
import Foundation
import HTTPClient
import HTTPCore
import RealtimeServer
import RetentionMessagingModels
import StateLocations
import StateStore
import Synchronization

/// `serve`'s decision recording and notification forwarding, set up from its options.
enum ServeRecording {
    /// The recording, started; nil (with a warning saying why) when serve records nothing.
    static func start(_ options: ServeCommand.Options, sources: [SnapshotSourceOptions.Resolved],
                      context: CommandContext) throws(CommandError) -> RealtimeService.Recording? {
        let console = context.console
        guard let pseudonyms = try EventStoreOptions.pseudonyms(context) else {
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
            console.error(#"{"event":"events","message":"# + jsonString(notice) + "}")
        }
        recorder.start()
        console.print("recording decisions to \(root) (pseudonym key \(pseudonyms.keyId), spool \(recorder.settings.spool.path))")
        return RealtimeService.Recording(recorder: recorder, pseudonyms: pseudonyms)
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

    /// Posts each verified notification's body to `url`, at most 64 at a time (more are dropped with a
    /// log line: Apple's retries and Notification History still have them).
    static func forwarder(_ target: URL?, context: CommandContext) throws(CommandError) -> (@Sendable (Data) -> Void)? {
        guard let target else { return nil }
        let client = CurlHTTPClient(configuration: try EnvironmentOptions.transportConfiguration(context))
        let inFlight = InFlight()
        let console = context.console
        return { body in
            guard inFlight.count.add(1, ordering: .relaxed).newValue <= 64 else {
                inFlight.count.subtract(1, ordering: .relaxed)
                console.error(#"{"event":"notification_not_forwarded","message":"64 forwards are in flight; this one was not forwarded"}"#)
                return
            }
            Task {
                defer { inFlight.count.subtract(1, ordering: .relaxed) }
                let request = HTTPRequest(method: "POST", url: target, headers: [("Content-Type", "application/json")], body: body)
                do {
                    let response = try await client.send(request)
                    if !(200..<300).contains(response.status) {
                        console.error(#"{"event":"notification_forward_failed","message":"the forward target answered HTTP \#(response.status)"}"#)
                    }
                } catch {
                    console.error(#"{"event":"notification_forward_failed","message":"# + jsonString("\(error)") + "}")
                }
            }
        }
    }

    static func summary(_ counters: EventRecorder.Counters) -> String {
        let recorded = counters.recorded.values.reduce(0, +)
        let stored = counters.stored.values.reduce(0, +)
        let dropped = counters.dropped.values.reduce(0, +)
        var text = "\(recorded) recorded, \(stored) stored"
        if dropped > 0 { text += ", \(dropped) dropped (\(counters.dropped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))" }
        if counters.spooledSegments > 0 { text += ", \(counters.spooledSegments) segment(s) left in the spool for the next start" }
        return text
    }

    /// `text` as a JSON string, written as every other JSON line serve logs is.
    static func jsonString(_ text: String) -> String {
        var json = CanonicalJSONWriter(capacity: text.utf8.count + 2)
        json.string(text)
        return String(decoding: json.bytes, as: UTF8.self)
    }
}

/// Forwards in flight, shared by the forwarding tasks.
final class InFlight: Sendable {
    let count = Atomic(0)
}
