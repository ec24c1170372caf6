import Basics
import Foundation
import RetentionMessagingModels
import Runtime
import StateStore

/// What an apply changes in the state document, kept as replayable changes so that after a write
/// conflict they can be laid over the document the other writer left, never over a blind copy.
struct StateRecorder: Sendable {
    var binding: StateBinding
    var base: StateDocument
    var condition: StateWriteCondition
    /// The published snapshot's digest this apply planned against.
    var plannedFrom: String?
    /// The snapshot this apply publishes, once it does.
    var publishing: RuntimeSnapshot?
    var changes: [@Sendable (inout StateDocument) -> Void] = []
    var clock: any RetentionClock

    init(binding: StateBinding, read: StateRead?, owner: StateOwner, clock: any RetentionClock) {
        self.binding = binding
        base = read?.document ?? StateDocument(owner: owner)
        condition = read?.writeCondition ?? .createOnly
        plannedFrom = read?.document?.snapshot?.digest
        self.clock = clock
    }

    mutating func record(_ change: @escaping @Sendable (inout StateDocument) -> Void) { changes.append(change) }

    func document(over start: StateDocument) -> StateDocument {
        var document = start
        for change in changes { change(&document) }
        if let publishing { document.snapshot = publishing }
        return document
    }

    var hasChanges: Bool { document(over: base) != base || condition == .createOnly && binding.legacySnapshotPath != nil }

    /// Writes with the condition of the last read. On a conflict it re-reads: when the other writer
    /// left the published snapshot this apply planned from (or the one it publishes), the changes
    /// are laid over their document and written again; otherwise it stops without writing.
    mutating func write() async throws(StateStoreError) {
        for attempt in 0..<Self.attempts {
            if attempt > 0 {
                // Two applies that conflict and retry at once conflict again: a short pause of random
                // length (at most 20 ms times the attempt) lets one of them through first.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 1...20) * attempt))
            }
            var document = document(over: base)
            document.updatedAt = clock.time()
            if let writer = binding.writer {
                document.writtenBy = writer
                document.serial = (base.serial ?? 0) + 1
            }
            do {
                let version = try await binding.store.write(document, condition: condition)
                base = document
                changes = []
                condition = .ifMatch(version)
                plannedFrom = document.snapshot?.digest
                return
            } catch where error.kind == .conflict {
                let fresh = try await binding.store.read()
                let theirs = fresh.document?.snapshot?.digest
                guard theirs == plannedFrom || (publishing != nil && theirs == publishing?.digest) else {
                    let winner = fresh.document?.writtenBy.map { " (written by \($0))" } ?? ""
                    throw StateStoreError(.conflict, store: binding.name,
                        "another apply\(winner) published snapshot \(theirs ?? "(none)") while this one ran, so this apply's snapshot was not written and nothing was overwritten; run apply again: it re-reads the state and re-plans")
                }
                base = fresh.document ?? StateDocument(owner: binding.store.owner)
                condition = fresh.writeCondition
            }
        }
        throw StateStoreError(.conflict, store: binding.name,
                              "other writers kept changing the state document; nothing was overwritten; run apply again")
    }

    /// Writes tried before giving up on a state document other writers keep changing.
    static let attempts = 6
}

extension ContentRecord {
    static func message(_ message: DesiredMessage, at time: UTCTime) -> ContentRecord {
        let body = (try? CanonicalJSON.encode(message.body)).map { String(decoding: $0, as: UTF8.self) }
        return ContentRecord(identifier: message.identifier, kind: .message, name: message.name, locale: message.locale,
                             productScope: message.productScope, contentVersion: message.contentVersion,
                             uploadBody: body, firstUploadedAt: time)
    }

    static func image(_ image: DesiredImage, png: [UInt8]?, at time: UTCTime) -> ContentRecord {
        let info = png.flatMap { try? PNGInfo.parse($0) }
        return ContentRecord(identifier: image.identifier, kind: .image, name: image.names.joined(separator: ", "),
                             contentVersion: "\(image.size.rawValue):\(image.sha256)",
                             image: ImageFacts(size: image.size.rawValue, width: info?.width ?? 0, height: info?.height ?? 0,
                                               byteCount: png?.count ?? 0, sha256: image.sha256),
                             firstUploadedAt: time)
    }
}

extension StateRecorder {
    /// What the reads showed that the record does not hold yet: content the manifests derive that is
    /// already there, review states, defaults and the realtime URL found as desired, the refresh cursor;
    /// for an apply of the main branch (`merging`), that it derives what pull requests submitted.
    mutating func recordObservations(desired: DesiredState, remote: RemoteState, time: UTCTime, merging: Bool) {
        let messages = desired.messages.filter { remote.messages[$0.identifier] != nil }
        let images = desired.images.filter { remote.images[$0.identifier] != nil }
        let pngs = desired.pngs
        let states = remote.messages.mapValues(\.rawValue).merging(remote.images.mapValues(\.state.rawValue)) { first, _ in first }
        let assignments = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0.messageIdentifier) },
                                     uniquingKeysWith: { first, _ in first })
        let inSync = desired.declaredPairs.filter { remote.defaults[$0] == assignments[$0] }
        let remoteDefaults = remote.defaults
        let realtime = desired.realtimeURL.flatMap { $0 == remote.realtimeURL ? $0 : nil }
        // The main branch no longer declares a URL: the record says it was removed (plans warned until now).
        let realtimeRemoved = merging && desired.realtimeURL == nil
        let cursor = remote.nextRefreshCursor
        let kinds = ContentKind.allCases.map(RemoteResources.resource(of:))
        let derived = Set(kinds.flatMap { $0.derived(in: desired).map(\.identifier) })
        let rejected = Set(kinds.flatMap { $0.remoteStates(in: remote).filter { $0.value == .rejected }.map(\.key) })
        // Declared external content Apple holds: adopted by the main branch's applies.
        let adopted: [(kind: ContentKind, identifier: String, name: String, state: String)] = merging ? kinds.flatMap { resource in
            let states = resource.remoteStates(in: remote)
            return resource.declaredExternal(in: desired).sorted { $0.key < $1.key }.compactMap { identifier, name in
                states[identifier].map { (resource.contentKind, identifier, name, $0.rawValue) }
            }
        } : []
        record { document in
            for message in messages where document.record(for: message.identifier) == nil {
                document.recordUpload(.message(message, at: time))
            }
            for image in images where document.record(for: image.identifier) == nil {
                document.recordUpload(.image(image, png: pngs[image.identifier], at: time))
            }
            for (identifier, state) in states { document.observeReviewState(state, of: identifier, at: time) }
            if merging {
                for identifier in messages.map(\.identifier) + images.map(\.identifier) { document.recordMerge(of: identifier, at: time) }
                document.recordMainDerivation(derived: derived, rejected: rejected)
            }
            for external in adopted {
                document.recordAdoption(of: external.identifier, kind: external.kind, name: external.name, state: external.state, at: time)
            }
            for pair in inSync {
                let recorded = document.lastAppliedDefault(productId: pair.productId, locale: pair.locale)
                if recorded == nil || recorded?.messageIdentifier != remoteDefaults[pair] {
                    document.recordDefault(productId: pair.productId, locale: pair.locale,
                                           messageIdentifier: remoteDefaults[pair], at: time)
                }
            }
            if let realtime, document.realtimeURL?.url != realtime {
                document.realtimeURL = RealtimeURLRecord(url: realtime, appliedAt: time)
            }
            if realtimeRemoved, document.realtimeURL?.url != nil {
                document.realtimeURL = RealtimeURLRecord(url: nil, appliedAt: time)
            }
            // A refused URL that is set after all (a test passed since) waits for nothing.
            if let realtime, document.realtimeURLAwaitingPerformanceTest?.url == realtime {
                document.realtimeURLAwaitingPerformanceTest = nil
            }
            if let cursor { document.defaultsRefreshCursor = cursor }
        }
    }
}
