public import Foundation

/// A value an option takes, read from its text by the type itself: every command that takes one reads
/// it the same way, help prints a declared default as it would be written, and a bad value is a usage
/// error while the command line is read, before anything is opened or sent.
public protocol ArgumentValue: Sendable {
    /// Reads the value, or says what the option takes.
    init(argument text: String) throws(ArgumentError)
    /// Reads the value where a relative path means one under `directory`, the command's working
    /// directory; the same as `init(argument:)` for values that name no file.
    static func parse(_ text: String, relativeTo directory: URL) throws(ArgumentError) -> Self
    /// The value as it is written on the command line: how help prints a declared default.
    var argumentDescription: String { get }
    /// Every value the type takes, in the order help and errors list them; empty when free.
    static var allValueStrings: [String] { get }
}

extension ArgumentValue {
    public static func parse(_ text: String, relativeTo directory: URL) throws(ArgumentError) -> Self {
        try Self(argument: text)
    }

    public static var allValueStrings: [String] { [] }
}

/// A choice among an enum's cases, spelt as their raw values (exactly, else ignoring case).
extension ArgumentValue where Self: RawRepresentable & CaseIterable, RawValue == String {
    public init(argument text: String) throws(ArgumentError) {
        guard let value = Self(rawValue: text) ?? Self.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            throw .mustBe(Option.list(Self.allValueStrings))
        }
        self = value
    }

    public var argumentDescription: String { rawValue }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// Why a text is not a value of an option's type. The option's name and the text are added where
/// the message is printed, so every message about the same kind of value reads the same.
public struct ArgumentError: Error, Sendable {
    enum Shape: Sendable {
        case mustBe(String), isNot(String), reason(String)
    }

    let shape: Shape

    /// `--format must be text or json, not 'xml'`.
    public static func mustBe(_ expected: String) -> ArgumentError { ArgumentError(shape: .mustBe(expected)) }
    /// `--max-duration 'soon' is not a duration: write …`.
    public static func isNot(_ what: String) -> ArgumentError { ArgumentError(shape: .isNot(what)) }
    /// `--listen 8080: expected HOST:PORT …`: a reason that names the text itself where it needs to.
    public static func reason(_ text: String) -> ArgumentError { ArgumentError(shape: .reason(text)) }

    /// The whole message, for `option` given `text`.
    func message(option: String, text: String) -> String {
        switch shape {
        case .mustBe(let expected): "\(option) must be \(expected), not '\(text)'"
        case .isNot(let what): "\(option) '\(text)' is not \(what)"
        case .reason(let reason): "\(option) \(reason)"
        }
    }
}

// The plain values options take.

extension String: ArgumentValue {
    public init(argument text: String) { self = text }
    public var argumentDescription: String { self }
}

/// Any whole number; an option that allows fewer says so with its range (`Arguments.value(_:as:in:)`).
extension Int: ArgumentValue {
    public init(argument text: String) throws(ArgumentError) {
        guard let value = Int(text) else { throw .mustBe("a whole number") }
        self = value
    }
    public var argumentDescription: String { String(self) }
}

extension Int64: ArgumentValue {
    public init(argument text: String) throws(ArgumentError) {
        guard let value = Int64(text) else { throw .mustBe("a whole number") }
        self = value
    }
    public var argumentDescription: String { String(self) }
}

extension UInt64: ArgumentValue {
    public init(argument text: String) throws(ArgumentError) {
        guard let value = UInt64(text) else { throw .mustBe("a whole number, 0 or more") }
        self = value
    }
    public var argumentDescription: String { String(self) }
}

/// A finite number (a fraction, a size in MB); seconds and milliseconds have types of their own.
extension Double: ArgumentValue {
    public init(argument text: String) throws(ArgumentError) {
        guard let value = Double(text), value.isFinite else { throw .mustBe("a number") }
        self = value
    }
    /// Whole numbers without a fraction: `300`, not `300.0`.
    public var argumentDescription: String { self == rounded() ? String(Int(self)) : String(self) }
}

/// A span of time in seconds, written as a plain number (`--max-age 300`, `--poll-interval 0.5`), 0 or more.
public struct Seconds: ArgumentValue, Hashable, Comparable {
    public var value: Double
    public init(_ value: Double) { self.value = value }

    public init(argument text: String) throws(ArgumentError) {
        guard let value = Double(text), value.isFinite, value >= 0 else { throw .mustBe("a number of seconds, 0 or more") }
        self.value = value
    }
    public var argumentDescription: String { value.argumentDescription }
    public static func < (left: Seconds, right: Seconds) -> Bool { left.value < right.value }
}

/// A span of time in milliseconds, written as a plain number (`--shed-after 500`), 0 or more.
public struct Milliseconds: ArgumentValue, Hashable, Comparable {
    public var value: Double
    public init(_ value: Double) { self.value = value }

    public init(argument text: String) throws(ArgumentError) {
        guard let value = Double(text), value.isFinite, value >= 0 else { throw .mustBe("a number of milliseconds, 0 or more") }
        self.value = value
    }
    public var seconds: Double { value / 1000 }
    public var argumentDescription: String { value.argumentDescription }
    public static func < (left: Milliseconds, right: Milliseconds) -> Bool { left.value < right.value }
}

/// A longer span written with units, `90s`, `320m`, `2h`, `1h30m`, or plain seconds; more than 0.
public struct TimeSpan: ArgumentValue, Hashable {
    public var seconds: Double
    /// As written, for messages that repeat what was asked (`stopped after 2h`).
    public var text: String

    public init(argument text: String) throws(ArgumentError) {
        guard let seconds = Self.seconds(text) else {
            throw .isNot("a duration: write a number with s, m or h (90s, 320m, 2h, 1h30m)")
        }
        self.seconds = seconds
        self.text = text
    }

    public var argumentDescription: String { text }

    /// The seconds `text` spells, or nil when it is none of the forms above or not positive.
    static func seconds(_ text: String) -> Double? {
        var total = 0.0
        var number = ""
        var sawUnit = false
        for character in text.lowercased() {
            if character.isNumber || character == "." {
                number.append(character)
            } else {
                guard let value = Double(number) else { return nil }
                switch character {
                case "s": total += value
                case "m": total += value * 60
                case "h": total += value * 3600
                default: return nil
                }
                number = ""
                sawUnit = true
            }
        }
        if !number.isEmpty {
            guard !sawUnit, let value = Double(number) else { return nil }
            total += value
        }
        return total > 0 ? total : nil
    }
}

/// Comma-separated values, `FILE[,FILE…]` or `ENV[,ENV]`: each read as `Element`, empty parts skipped,
/// repeats kept once in the order first written.
public struct ArgumentList<Element: ArgumentValue & Hashable>: ArgumentValue, Hashable {
    public var elements: [Element]

    public init(argument text: String) throws(ArgumentError) {
        try self.init(text) { part throws(ArgumentError) in try Element(argument: part) }
    }

    public static func parse(_ text: String, relativeTo directory: URL) throws(ArgumentError) -> ArgumentList<Element> {
        try ArgumentList(text) { part throws(ArgumentError) in try Element.parse(part, relativeTo: directory) }
    }

    private init(_ text: String, element: (String) throws(ArgumentError) -> Element) throws(ArgumentError) {
        var elements: [Element] = []
        for part in text.split(separator: ",").map(String.init) where !part.trimmingCharacters(in: .whitespaces).isEmpty {
            let element = try element(part)
            if !elements.contains(element) { elements.append(element) }
        }
        guard !elements.isEmpty else { throw .reason("names nothing") }
        self.elements = elements
    }

    public var argumentDescription: String { elements.map(\.argumentDescription).joined(separator: ",") }
    public static var allValueStrings: [String] { Element.allValueStrings }
}
