import Foundation
public import Manifests
public import RetentionMessagingModels
public import StateStore

/// How a message identifier at Apple is known to these manifests and the state — a managed message,
/// an external one (with the text it is assumed to show), an earlier upload the state recorded — so
/// that a plan can say what customers see now, not only what they will see. Built once per plan:
/// every lookup is a dictionary read.
public struct KnownMessages: Sendable {
    public enum Origin: Sendable, Hashable {
        case managed
        /// `assumed` is the text the external message declares for the locale asked about.
        case external(assumed: AssumedText?)
        case earlierUpload
    }

    public struct Known: Sendable, Hashable {
        public var name: String
        public var origin: Origin
        /// The text the customer sees, where it is known.
        public var body: UploadMessageRequestBody?
    }

    private let managed: [String: DesiredMessage]
    private let external: [String: DesiredExternalMessage]
    private let document: StateDocument?

    public init(desired: DesiredState, document: StateDocument?) {
        managed = Dictionary(desired.messages.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        external = desired.externalByIdentifier
        self.document = document
    }

    /// What `identifier` is, for a pair in `locale`; nil when nothing knows it.
    public func message(_ identifier: String, locale: String) -> Known? {
        if let message = managed[identifier] { return Known(name: message.name, origin: .managed, body: message.body) }
        if let message = external[identifier] {
            let assumed = message.assumedText?.first { $0.locale == locale }
            return Known(name: message.name, origin: .external(assumed: assumed),
                         body: assumed.map { UploadMessageRequestBody(header: $0.header, body: $0.body) })
        }
        if let record = document?.record(for: identifier) {
            return Known(name: record.name, origin: .earlierUpload,
                         body: record.uploadBody.flatMap { try? JSONDecoder().decode(UploadMessageRequestBody.self, from: Data($0.utf8)) })
        }
        return nil
    }
}
