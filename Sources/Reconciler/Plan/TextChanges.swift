import RetentionMessagingModels
import Foundation
import StateStore

/// What a new message version changes against the version it replaces, field by field, from the
/// upload body the state record kept for the old identifier.
public struct TextChanges: Sendable, Hashable {
    /// The identifier of the version in use that the new one replaces.
    public var replaces: String
    public var fields: [FieldChange]

    public init(replaces: String, fields: [FieldChange]) {
        self.replaces = replaces
        self.fields = fields
    }
}

/// One changed field: `header`, `body`, `image`, `bullet 2`, …; nil before: added, nil after: removed.
public struct FieldChange: Codable, Sendable, Hashable {
    public var field: String
    public var before: String?
    public var after: String?

    public init(field: String, before: String?, after: String?) {
        self.field = field
        self.before = before
        self.after = after
    }
}

extension TextChanges {
    /// The version of the same message, locale and product scope that is uploaded and recorded,
    /// preferring one in use, compared with `message`; nil without a record or an older version.
    static func find(for message: DesiredMessage, remote: RemoteState, usage: UsageIndex) -> TextChanges? {
        guard let document = remote.state?.document else { return nil }
        let candidates = document.content.filter {
            $0.kind == .message && $0.identifier != message.identifier && $0.name == message.name
                && $0.locale == message.locale && $0.productScope == message.productScope
                && remote.messages[$0.identifier] != nil && $0.uploadBody != nil
        }
        guard let old = candidates.first(where: { usage.isInUse($0.identifier) }) ?? candidates.max(by: { $0.firstUploadedAt < $1.firstUploadedAt }),
              let text = old.uploadBody,
              let before = try? JSONDecoder().decode(UploadMessageRequestBody.self, from: Data(text.utf8)) else { return nil }
        let fields = compare(before, message.body)
        return fields.isEmpty ? nil : TextChanges(replaces: old.identifier, fields: fields)
    }

    static func compare(_ old: UploadMessageRequestBody, _ new: UploadMessageRequestBody) -> [FieldChange] {
        var fields: [FieldChange] = []
        func add(_ field: String, _ before: String?, _ after: String?) {
            if before != after { fields.append(FieldChange(field: field, before: before, after: after)) }
        }
        add("header", old.header, new.header)
        add("body", old.body, new.body)
        add("header position", old.headerPosition?.rawValue, new.headerPosition?.rawValue)
        func image(_ image: UploadMessageImage?) -> String? { image.map { "\($0.imageIdentifier) (\($0.altText))" } }
        add("image", image(old.image), image(new.image))
        let before = old.bulletPoints ?? [], after = new.bulletPoints ?? []
        for index in 0..<max(before.count, after.count) {
            func bullet(_ list: [UploadMessageBulletPoint]) -> String? {
                index < list.count ? "\(list[index].text) [icon \(list[index].imageIdentifier): \(list[index].altText)]" : nil
            }
            add("bullet \(index + 1)", bullet(before), bullet(after))
        }
        return fields
    }
}
