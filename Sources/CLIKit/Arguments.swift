import Basics
public import Foundation

/// One option a command accepts, declared once: parsing, `--help` and the shell completions all read
/// the same declaration, so none of them can drift from the others.
public struct Option: Sendable, Hashable {
    /// What a shell should offer after the option.
    public enum Completion: Sendable, Hashable {
        case none, file, directory
    }

    /// The spelling shown in help, e.g. `--env`.
    public var name: String
    /// Other accepted spellings, e.g. `--environment` for the emulator's `--env`.
    public var aliases: [String]
    /// Spellings still accepted but no longer offered (not in help or completions); using one prints
    /// a one-line notice naming the option's own spelling and `deprecationNote`.
    public var deprecatedAliases: [String] = []
    /// Why the old spelling went, for that notice.
    public var deprecationNote: String = ""
    /// The value's placeholder in help (`DIR`, `FILE`); nil for a flag.
    public var valueName: String?
    /// The help text, one element per printed line.
    public var help: [String]
    /// The only values the option takes, in the order help and errors list them; empty when free.
    public var choices: [String]
    public var completion: Completion
    /// The value used when the option is absent, as help prints it after the text: `(default: X)`.
    /// Declared here once; `Arguments.value(_:as:)` reads the same text when the option is absent.
    public var defaultValue: String?
    /// A value the command cannot run without (`--env`): the synopsis shows it outside brackets, and
    /// the command reads it with `Arguments.required`, which the commands' tests hold to this.
    public var isRequired = false

    public init(_ name: String, aliases: [String] = [], value valueName: String? = nil, choices: [String] = [],
                completion: Completion = .none, default defaultValue: String? = nil, help: [String]) {
        self.name = name
        self.aliases = aliases
        self.valueName = valueName
        self.help = help
        self.choices = choices
        self.completion = completion
        self.defaultValue = defaultValue
    }

    /// An option whose value is a `T`: its choices (for an enum) and its default are declared as `T`
    /// and printed as they would be written.
    public init<T: ArgumentValue>(_ name: String, aliases: [String] = [], value valueName: String, of type: T.Type,
                                  completion: Completion = .none, default defaultValue: T? = nil, help: [String]) {
        self.init(name, aliases: aliases, value: valueName, choices: T.allValueStrings, completion: completion,
                  default: defaultValue?.argumentDescription, help: help)
    }

    /// The same option, declared as one the command cannot run without.
    public func required() -> Option {
        var option = self
        option.isRequired = true
        return option
    }

    /// How the synopsis writes it: `--env sandbox|production`, `--plan FILE`, `--strict`.
    public var synopsis: String {
        guard let valueName else { return name }
        return name + " " + (choices.isEmpty ? valueName : choices.joined(separator: "|"))
    }

    /// The same option, also accepting `spellings` with a notice that says why they went.
    public func deprecated(_ spellings: [String], note: String) -> Option {
        var option = self
        option.deprecatedAliases = spellings
        option.deprecationNote = note
        return option
    }

    /// The help lines as printed: the values the option takes and its default, both from the
    /// declaration, follow the text (`(values: text, json; default: text)`), on the last line when
    /// they fit in `Self.helpWidth`, else on a line of their own.
    public var helpLines: [String] {
        var facts: [String] = []
        if !choices.isEmpty { facts.append("values: " + choices.joined(separator: ", ")) }
        if let defaultValue { facts.append("default: " + defaultValue) }
        guard !facts.isEmpty else { return help }
        let suffix = "(" + facts.joined(separator: "; ") + ")"
        guard let last = help.last else { return [suffix] }
        if last.count + 1 + suffix.count <= Self.helpWidth { return help.dropLast() + [last + " " + suffix] }
        return help + [suffix]
    }

    /// The widest help text line the generated facts are added to.
    public static let helpWidth = 76

    public var takesValue: Bool { valueName != nil }
    /// Every spelling parsing accepts, the deprecated ones included.
    public var spellings: [String] { [name] + aliases + deprecatedAliases }
    /// The spellings completions offer.
    public var offeredSpellings: [String] { [name] + aliases }
    /// The left column of help: `--manifests DIR`.
    public var label: String { valueName.map { "\(name) \($0)" } ?? name }

    /// `sandbox or production`, `text, markdown or json`: how help and errors list the choices.
    public static func list(_ words: [String]) -> String {
        guard let last = words.last else { return "" }
        return words.count == 1 ? last : words.dropLast().joined(separator: ", ") + " or " + last
    }
}

/// The command line a command reads: options may be written `--name value` or `--name=value`; a
/// command takes what it declared, and anything left when it calls `finish()` is a usage error.
public struct Arguments: Sendable {
    private var remaining: [String]
    private var declared: [Option]
    /// One line for each deprecated spelling the command line used, for standard error.
    public private(set) var notices: [String] = []
    /// Every spelling a command asked for, given or not: a declared option no parse ever asks for is
    /// a help line that does nothing, which the commands' tests look for.
    public private(set) var consulted: Set<String> = []
    /// The options a command read as required (`required(_:)`): the commands' tests hold them to the
    /// declarations' `isRequired`, which the synopsis shows.
    public private(set) var demanded: Set<String> = []

    /// Arguments read without a declaration (tests and the demo build them by hand).
    public init(_ arguments: [String]) {
        remaining = arguments
        declared = []
    }

    /// Checks every option against the command's declaration before anything else is read, so a
    /// mistyped option is reported (with the nearest declared spelling) before a missing required one.
    public init(_ arguments: [String], options: [Option]) throws(CommandError) {
        remaining = arguments
        declared = options
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            guard argument.hasPrefix("-"), argument != "-" else { continue }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard let option = options.first(where: { $0.spellings.contains(name) }) else {
                let spellings = options.flatMap(\.spellings)
                // A near spelling, else a short spelling the mistyped one begins with: `--enviroment`
                // (a long word misspelt) is `--env`.
                let nearest = EditDistance.nearest(name, in: spellings, maxDistance: 3)
                    ?? spellings.filter { $0.hasPrefix("--") && $0.count >= 5 && name.hasPrefix($0) }.max { $0.count < $1.count }
                let suggestion = nearest.map { " (did you mean '\($0)'?)" } ?? ""
                throw CommandError("unknown option '\(name)'\(suggestion)", exitCode: .usage)
            }
            if option.deprecatedAliases.contains(name) {
                let notice = "warning: \(name) is deprecated here; write \(option.label)"
                    + (option.deprecationNote.isEmpty ? "" : " (\(option.deprecationNote))")
                if !notices.contains(notice) { notices.append(notice) }
            }
            let inline = name.count < argument.count
            if option.takesValue && !inline {
                guard index < arguments.count else { throw CommandError("\(name) needs a value", exitCode: .usage) }
                index += 1
            } else if !option.takesValue && inline {
                throw CommandError("\(name) takes no value", exitCode: .usage)
            }
        }
    }

    public var isEmpty: Bool { remaining.isEmpty }

    /// Every spelling `name` is known by: its declaration's, or just itself when undeclared.
    private func spellings(of name: String) -> [String] {
        declared.first { $0.spellings.contains(name) }?.spellings ?? [name]
    }

    /// Removes and returns the value of `--name` (or an alias), or nil when absent; the last one wins.
    public mutating func option(_ name: String) throws(CommandError) -> String? {
        try option(spellings: spellings(of: name))
    }

    private mutating func option(spellings names: [String]) throws(CommandError) -> String? {
        consulted.formUnion(names)
        var found: String?
        var index = 0
        while index < remaining.count {
            let argument = remaining[index]
            if argument == "--" { break }
            if let spelling = names.first(where: { argument == $0 }) {
                guard index + 1 < remaining.count else {
                    throw CommandError("\(spelling) needs a value", exitCode: .usage)
                }
                found = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
            } else if let spelling = names.first(where: { argument.hasPrefix($0 + "=") }) {
                found = String(argument.dropFirst(spelling.count + 1))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// Removes `--name` (and its aliases) and tells whether it was there.
    public mutating func flag(_ name: String) -> Bool {
        let names = spellings(of: name)
        consulted.formUnion(names)
        let before = remaining.count
        remaining.removeAll { names.contains($0) }
        return remaining.count != before
    }

    /// An option's aliases count even when the arguments were built without a declaration.
    public mutating func value(_ option: Option) throws(CommandError) -> String? {
        try self.option(spellings: Array(Set(spellings(of: option.name) + option.spellings)).sorted())
    }

    public mutating func flag(_ option: Option) -> Bool {
        flag(option.name)
    }

    /// The value read as `T`, else the option's declared default read the same way; nil when absent
    /// without a default. A relative path in it is under `directory` (see `ArgumentValue.parse`).
    public mutating func value<T: ArgumentValue>(_ option: Option, as type: T.Type,
                                                 relativeTo directory: URL? = nil) throws(CommandError) -> T? {
        guard let text = try value(option) ?? option.defaultValue else { return nil }
        return try Self.read(text, as: T.self, for: option, relativeTo: directory)
    }

    /// The value read as `T` when it was given, ignoring a declared default: for an option whose
    /// presence matters to a combination (`--submission-reserve` goes with `--only-uploads`).
    public mutating func given<T: ArgumentValue>(_ option: Option, as type: T.Type) throws(CommandError) -> T? {
        guard let text = try value(option) else { return nil }
        return try Self.read(text, as: T.self, for: option, relativeTo: nil)
    }

    /// The value (or the declared default) read as `T` and within `range`; `expected` words the range
    /// for the error (`a whole number from 1 to 256`).
    public mutating func value<T: ArgumentValue & Comparable, R: RangeExpression>(
        _ option: Option, as type: T.Type, in range: R, expected: String
    ) throws(CommandError) -> T? where R.Bound == T {
        try Self.within(range, expected: expected, option: option, text: try value(option) ?? option.defaultValue)
    }

    /// `given(_:as:)` within `range`.
    public mutating func given<T: ArgumentValue & Comparable, R: RangeExpression>(
        _ option: Option, as type: T.Type, in range: R, expected: String
    ) throws(CommandError) -> T? where R.Bound == T {
        try Self.within(range, expected: expected, option: option, text: try value(option))
    }

    private static func within<T: ArgumentValue & Comparable, R: RangeExpression>(
        _ range: R, expected: String, option: Option, text: String?
    ) throws(CommandError) -> T? where R.Bound == T {
        guard let text else { return nil }
        let value = try read(text, as: T.self, for: option, relativeTo: nil)
        guard range.contains(value) else {
            throw CommandError(ArgumentError.mustBe(expected).message(option: option.name, text: text), exitCode: .usage)
        }
        return value
    }

    /// A required value; the error says what it may be.
    public mutating func required(_ option: Option) throws(CommandError) -> String {
        demanded.insert(option.name)
        guard let text = try self.option(option.name) else {
            let what = option.choices.isEmpty ? option.valueName ?? "a value" : Option.list(option.choices)
            throw CommandError("\(option.name) is required: \(what)", exitCode: .usage)
        }
        return text
    }

    public mutating func required<T: ArgumentValue>(_ option: Option, as type: T.Type) throws(CommandError) -> T {
        try Self.read(try required(option), as: T.self, for: option, relativeTo: nil)
    }

    /// Reads `text` as `T`; every error names the option and repeats the text.
    public static func read<T: ArgumentValue>(_ text: String, as type: T.Type, for option: Option,
                                              relativeTo directory: URL?) throws(CommandError) -> T {
        do throws(ArgumentError) {
            if let directory { return try T.parse(text, relativeTo: directory) }
            return try T(argument: text)
        } catch {
            throw CommandError(error.message(option: option.name, text: text), exitCode: .usage)
        }
    }

    /// Removes and returns the next argument that is not an option, if any.
    public mutating func positional() -> String? {
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("-") || $0 == "-" }) else { return nil }
        return remaining.remove(at: index)
    }

    /// Fails on whatever no one asked for.
    public func finish() throws(CommandError) {
        if let first = remaining.first {
            throw CommandError("unexpected argument '\(first)' (see --help)", exitCode: .usage)
        }
    }
}

/// A command's `--help` page, laid out from its option declarations.
public struct HelpPage: Sendable {
    /// The synopsis written by hand; nil when the command generates it.
    public var usage: String?
    public var about: String
    public var options: [Option]
    /// Where option descriptions start, counted after the two-space indent.
    public var column: Int
    public var footer: String?

    /// A page whose synopsis is written by hand: for a command whose modes or alternatives no list of
    /// declarations can say (`--snapshot FILE | --manifests DIR --env ENV`). The commands' tests hold
    /// every option it names to the declarations.
    public init(usage: String, about: String, options: [Option] = [], column: Int = 22, footer: String? = nil) {
        self.usage = usage
        self.about = about
        self.options = options
        self.column = column
        self.footer = footer
    }

    /// A page whose synopsis the command generates from its declarations (`Command.usage`).
    public init(about: String, options: [Option] = [], column: Int = 22, footer: String? = nil) {
        self.usage = nil
        self.about = about
        self.options = options
        self.column = column
        self.footer = footer
    }

    /// The page under `usage`, the synopsis the command shows.
    public func text(usage: String) -> String {
        var parts = [usage, about]
        if !options.isEmpty { parts.append("Options:\n" + Self.rows(options, column: column)) }
        if let footer { parts.append(footer) }
        return parts.joined(separator: "\n\n")
    }

    /// A label shorter than the column is padded to it; a longer one is followed by two spaces.
    public static func rows(_ options: [Option], column: Int) -> String {
        var lines: [String] = []
        for option in options {
            let label = option.label
            let gap = label.count < column ? String(repeating: " ", count: column - label.count) : "  "
            let help = option.helpLines
            lines.append("  " + label + gap + (help.first ?? ""))
            for line in help.dropFirst() {
                lines.append(String(repeating: " ", count: column + 2) + line)
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The usage line made from a command's declarations, as swift-argument-parser makes it: the
/// positional word, the required options, then every other option in brackets — or `[options]` when
/// listing them would make the line longer than `width`.
public enum Synopsis {
    public static let width = 100

    public static func line(command: String, positional: Positional?, options: [Option]) -> String {
        let head = ["Usage: retention-sync", command] + (positional.map { [$0.synopsis] } ?? []) + options.filter(\.isRequired).map(\.synopsis)
        let optional = options.filter { !$0.isRequired }.map { "[\($0.synopsis)]" }
        let full = (head + optional).joined(separator: " ")
        guard full.count > width else { return full }
        return (head + ["[options]"]).joined(separator: " ")
    }
}
