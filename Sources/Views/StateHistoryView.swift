import Basics
import Foundation
public import StateStore

/// `retention-sync state history` as a person and a program read it: one line per kept version,
/// oldest first.
public enum StateHistoryView {
    public static func text(_ entries: [StateHistoryEntry], store: String) -> String {
        guard !entries.isEmpty else { return "No state document in \(store) yet; apply writes the first.\n" }
        var out = ["History of \(store): \(entries.count) version\(entries.count == 1 ? "" : "s") kept, oldest first"]
        for entry in entries {
            let number = "#\(entry.number)".padding(toLength: 6, withPad: " ", startingAt: 0)
            let time = entry.writtenAt.map { ReviewTimeView.time($0) } ?? "time unknown        "
            let digest = entry.digest.hasPrefix("sha256:") ? String(entry.digest.prefix(19)) : entry.digest
            out.append("  \(number) \(time)  \(digest)  \(entry.current ? "(current) " : "")\(entry.summary)")
            out.append("         by \(entry.writer?.description ?? "an unnamed writer (before runs were recorded)")")
        }
        // Each line made safe on its own: the line breaks are the view's, not the store's.
        return out.map(TerminalText.safe).joined(separator: "\n") + "\n"
    }

    struct JSONEntry: Encodable {
        var number: Int
        var writtenAt: String?
        var writtenBy: StateWriter?
        var digest: String
        var summary: String
        var current: Bool

        enum CodingKeys: String, CodingKey {
            case number, writtenAt = "written_at", writtenBy = "written_by", digest, summary, current
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(number, forKey: .number)
            try container.encode(writtenAt, forKey: .writtenAt)
            try container.encode(writtenBy, forKey: .writtenBy)
            try container.encode(digest, forKey: .digest)
            try container.encode(summary, forKey: .summary)
            try container.encode(current, forKey: .current)
        }
    }

    public static func json(_ entries: [StateHistoryEntry], store: String) throws -> String {
        struct Document: Encodable {
            var store: String
            var versions: [JSONEntry]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let document = Document(store: store, versions: entries.map {
            JSONEntry(number: $0.number, writtenAt: $0.writtenAt.map(StateTime.format), writtenBy: $0.writer, digest: $0.digest,
                      summary: $0.summary, current: $0.current)
        })
        return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
    }
}
