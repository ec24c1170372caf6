import Basics
import Foundation
public import CLIKit
import RetentionMessagingModels

/// A vendor's export of the messages it made, as CSV (`import --names FILE`): what each message
/// identifier is called and, optionally, what it says in which locale. The first row names the
/// columns: `identifier` and `name` are required, `locale`, `header` and `body` optional, any other
/// column is ignored (exports carry more). Fields follow RFC 4180: commas separate them, a field in
/// double quotes may hold commas, line breaks and `""` for a quote. A name is made a manifest name
/// (lowercase letters, digits and dashes: `Win-back 50% (EN)` → `win-back-50-en`). Everything in it is
/// untrusted text: it reaches manifests only as escaped YAML and the terminal only as a line number.
public struct VendorNames: Sendable {
    public struct Entry: Sendable, Hashable {
        public var identifier: String
        /// As a manifest name.
        public var name: String
        public var locale: String?
        public var header: String?
        public var body: String?
        /// The line its row starts on.
        public var line: Int
        /// Why its header and body cannot be a message's assumed text (a line break, too long), if so:
        /// the name is kept, the text left out, and import says so.
        public var textProblem: String?
    }

    public var file: String
    /// In the file's order; one per identifier.
    public var entries: [Entry]

    public func entry(for identifier: String) -> Entry? { entries.first { $0.identifier == identifier } }

    public static func parse(_ bytes: [UInt8], file: String) throws(CommandError) -> VendorNames {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let records = try CSVRecords.read(text, file: file)
        guard let header = records.first else {
            throw CommandError("\(file): empty; the first row names the columns: identifier,name and optionally locale,header,body")
        }
        let columns = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        func column(_ name: String) -> Int? { columns.firstIndex(of: name) }
        guard let identifierColumn = column("identifier"), let nameColumn = column("name") else {
            throw CommandError("\(file):\(header.line): the first row names no '\(column("identifier") == nil ? "identifier" : "name")' column "
                               + "(it names \(columns.count) columns); the file needs identifier and name, and may have locale, header and body")
        }
        var entries: [Entry] = []
        var lineOf: [String: Int] = [:]
        for record in records.dropFirst() where !(record.fields.count == 1 && record.fields[0].isEmpty) {
            guard record.fields.count == columns.count else {
                throw CommandError("\(file):\(record.line): \(record.fields.count) fields where the first row names \(columns.count) columns")
            }
            func field(_ index: Int?) -> String? {
                guard let index else { return nil }
                let value = record.fields[index].trimmingCharacters(in: .whitespacesAndNewlines)
                return value.isEmpty ? nil : value
            }
            let identifier = (field(identifierColumn) ?? "").lowercased()
            guard isUUID(identifier) else {
                throw CommandError("\(file):\(record.line): the identifier is not a UUID (8-4-4-4-12 hexadecimal digits)")
            }
            if let first = lineOf[identifier] {
                throw CommandError("\(file):\(record.line): identifier \(identifier) is also on line \(first); give each message one row")
            }
            lineOf[identifier] = record.line
            guard let name = field(nameColumn).map(manifestName), !name.isEmpty else {
                throw CommandError("\(file):\(record.line): no name (a name needs a letter or a digit)")
            }
            let locale = field(column("locale")), header = field(column("header")), body = field(column("body"))
            if let locale, !AppStoreLocaleCodes.isListed(locale) {
                throw CommandError("\(file):\(record.line): the locale is not an App Store Connect locale code (en-US, de-DE, …)")
            }
            if (header != nil || body != nil) && (locale == nil || header == nil || body == nil) {
                throw CommandError("\(file):\(record.line): a header or body needs all three of locale, header and body (the text a locale shows)")
            }
            var entry = Entry(identifier: identifier, name: name, locale: locale, header: header, body: body, line: record.line)
            if let header, let body {
                entry.textProblem = textProblem(header, what: "header", limit: RetentionLimits.headerLength)
                    ?? textProblem(body, what: "body", limit: RetentionLimits.bodyLength)
            }
            entries.append(entry)
        }
        return VendorNames(file: file, entries: entries)
    }

    /// What keeps `text` from being a message's text, as the manifests' validator would refuse it.
    static func textProblem(_ text: String, what: String, limit: Int) -> String? {
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "its \(what) holds a line break or another control character, which a message cannot show"
        }
        let length = RetentionLimits.length(of: text)
        return length > limit ? "its \(what) is \(length) characters long; Apple allows at most \(limit)" : nil
    }

    /// Lowercase letters and digits kept, every other run of characters one dash, none at either end.
    static func manifestName(_ text: String) -> String {
        var out = ""
        for scalar in text.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else if !out.isEmpty && !out.hasSuffix("-") {
                out += "-"
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out
    }

    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

/// RFC 4180 records, each with the line it starts on.
enum CSVRecords {
    struct Record {
        var fields: [String]
        var line: Int
    }

    static func read(_ text: String, file: String) throws(CommandError) -> [Record] {
        var records: [Record] = []
        var fields: [String] = [], field = ""
        var line = 1, start = 1
        var quoted = false, wasQuoted = false, atFieldStart = true
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        func endRecord() {
            fields.append(field)
            records.append(Record(fields: fields, line: start))
            (fields, field, atFieldStart, wasQuoted) = ([], "", true, false)
        }
        while let scalar = pending {
            pending = scalars.next()
            if quoted {
                if scalar == "\"" {
                    if pending == "\"" { field += "\""; pending = scalars.next() } else { quoted = false }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"" where atFieldStart:
                (quoted, wasQuoted, atFieldStart) = (true, true, false)
            case "\"":
                throw CommandError("\(file):\(line): a quote inside an unquoted field; quote the whole field and double the quote (\"\")")
            case ",":
                fields.append(field)
                (field, atFieldStart, wasQuoted) = ("", true, false)
            case "\r" where pending == "\n":
                continue
            case "\n", "\r":
                endRecord()
                line += 1
                start = line
            default:
                guard !wasQuoted else {
                    throw CommandError("\(file):\(line): text after a quoted field's closing quote; a field is quoted whole or not at all")
                }
                field.unicodeScalars.append(scalar)
                atFieldStart = false
            }
        }
        if quoted { throw CommandError("\(file):\(start): a quoted field is not closed before the end of the file") }
        if !fields.isEmpty || !field.isEmpty || wasQuoted { endRecord() }
        return records
    }
}
