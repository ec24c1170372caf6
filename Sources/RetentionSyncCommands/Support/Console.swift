import Foundation

/// Where a command writes, and what kind of place that is. Tests capture both streams.
public final class Console: @unchecked Sendable {
    private let lock = NSLock()
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    /// Standard output is a terminal (progress and colour are allowed).
    public let isTerminal: Bool
    /// Colour only on a terminal, and never when `NO_COLOR` is set.
    public let useColor: Bool

    public init(isTerminal: Bool, environment: [String: String],
                out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.useColor = isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        self.writeOut = out
        self.writeErr = err
    }

    /// The process's own standard output and error.
    public static func standard(environment: [String: String]) -> Console {
        Console(isTerminal: isatty(STDOUT_FILENO) == 1, environment: environment,
                out: { FileHandle.standardOutput.write(Data($0.utf8)) },
                err: { FileHandle.standardError.write(Data($0.utf8)) })
    }

    /// Writes `text` and a newline to standard output.
    public func print(_ text: String = "") { lock.withLock { writeOut(text + "\n") } }
    /// Writes `text` as it is to standard output.
    public func write(_ text: String) { lock.withLock { writeOut(text) } }
    /// Writes `text` and a newline to standard error.
    public func error(_ text: String) { lock.withLock { writeErr(text + "\n") } }
}

/// A console that keeps what is written, for tests.
public final class CapturedConsole: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""
    public private(set) var console: Console!

    public init(isTerminal: Bool = false, environment: [String: String] = [:]) {
        console = Console(isTerminal: isTerminal, environment: environment,
                          out: { [unowned self] text in self.lock.withLock { self.outText += text } },
                          err: { [unowned self] text in self.lock.withLock { self.errText += text } })
    }

    public var stdout: String { lock.withLock { outText } }
    public var stderr: String { lock.withLock { errText } }
}
