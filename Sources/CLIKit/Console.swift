import Foundation
import Synchronization

/// Where a command writes (and, for apply's confirmation, reads), and what kind of place that is.
/// Tests capture both streams.
public final class Console: Sendable {
    /// Serializes writes, so that lines from two threads never interleave.
    private let lock = Mutex(())
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    private let readIn: @Sendable () -> String?
    /// Standard output is a terminal (progress and colour are allowed).
    public let isTerminal: Bool
    /// Standard input is a terminal: a person can answer a question.
    public let isInteractive: Bool
    /// Whether to paint with ANSI colours; see `Console.useColor(isTerminal:environment:noColorFlag:)`.
    public let useColor: Bool

    public init(isTerminal: Bool, environment: [String: String], isInteractive: Bool = false, noColor: Bool = false,
                out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
                read: @escaping @Sendable () -> String? = { nil }) {
        self.isTerminal = isTerminal
        self.isInteractive = isInteractive
        self.useColor = Self.useColor(isTerminal: isTerminal, environment: environment, noColorFlag: noColor)
        self.writeOut = out
        self.writeErr = err
        self.readIn = read
    }

    private init(_ other: Console, useColor: Bool) {
        isTerminal = other.isTerminal
        isInteractive = other.isInteractive
        self.useColor = useColor
        writeOut = other.writeOut
        writeErr = other.writeErr
        readIn = other.readIn
    }

    /// The one decision about colour, for every command and view: `--no-color` and a non-empty
    /// `NO_COLOR` always win; otherwise a non-empty `FORCE_COLOR` (other than `0`) colours even without a
    /// terminal (CI logs that render ANSI); otherwise colour on a terminal whose `TERM` is not `dumb`.
    public static func useColor(isTerminal: Bool, environment: [String: String], noColorFlag: Bool = false) -> Bool {
        if noColorFlag || !(environment["NO_COLOR"] ?? "").isEmpty { return false }
        if let force = environment["FORCE_COLOR"], !force.isEmpty, force != "0" { return true }
        return isTerminal && environment["TERM"] != "dumb"
    }

    /// The same streams with colour turned off (`--no-color`).
    public func withoutColor() -> Console { Console(self, useColor: false) }

    /// The process's own standard output, error and input.
    public static func standard(environment: [String: String]) -> Console {
        Console(isTerminal: isatty(STDOUT_FILENO) == 1, environment: environment,
                isInteractive: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1,
                out: { FileHandle.standardOutput.write(Data($0.utf8)) },
                err: { FileHandle.standardError.write(Data($0.utf8)) },
                read: { Swift.readLine(strippingNewline: true) })
    }

    /// Writes `text` and a newline to standard output.
    public func print(_ text: String = "") { lock.withLock { _ in writeOut(text + "\n") } }
    /// Writes `text` as it is to standard output.
    public func write(_ text: String) { lock.withLock { _ in writeOut(text) } }
    /// Writes `text` and a newline to standard error.
    public func error(_ text: String) { lock.withLock { _ in writeErr(text + "\n") } }
    /// Reads one line a person typed; nil at the end of input.
    public func readLine() -> String? { readIn() }
}

/// A console that keeps what is written, for tests; `input` lines stand for a person at a terminal.
public final class CapturedConsole: Sendable {
    /// What was written and what is left to read, shared by this object and its console's closures.
    private final class Captured: Sendable {
        struct Text {
            var out = ""
            var err = ""
            var input: [String]
        }
        let text: Mutex<Text>

        init(input: [String]) { text = Mutex(Text(input: input)) }
    }

    private let captured: Captured
    public let console: Console

    public init(isTerminal: Bool = false, environment: [String: String] = [:], input: [String]? = nil) {
        let captured = Captured(input: input ?? [])
        self.captured = captured
        console = Console(isTerminal: isTerminal, environment: environment, isInteractive: input != nil,
                          out: { text in captured.text.withLock { $0.out += text } },
                          err: { text in captured.text.withLock { $0.err += text } },
                          read: { captured.text.withLock { $0.input.isEmpty ? nil : $0.input.removeFirst() } })
    }

    public var stdout: String { captured.text.withLock { $0.out } }
    public var stderr: String { captured.text.withLock { $0.err } }
}
