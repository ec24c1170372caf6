/// The process exit status, as a typed value.
public struct ExitCode: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// Success; for `plan --detailed-exitcode`: nothing can be done now.
    public static let success = ExitCode(0)
    /// An error (invalid manifests, content these manifests take up already rejected, a failed request).
    public static let failure = ExitCode(1)
    /// `plan --detailed-exitcode`: ready actions are pending.
    public static let changesPending = ExitCode(2)
    /// A remote condition needs a person, and nothing this run did failed: `plan --detailed-exitcode`
    /// and `apply` (content App Review rejected after the main branch used it, a realtime URL
    /// waiting for a performance test), `status --detailed-exitcode` (REJECTED, or PENDING too long).
    public static let needsAttention = ExitCode(3)
    /// The command line itself was wrong.
    public static let usage = ExitCode(64)
    /// `serve`: a place it was given cannot be used (an events folder it cannot write); EX_CONFIG.
    public static let configuration = ExitCode(78)

    public var description: String { String(rawValue) }
}

/// An error that ends a command with a message for the person running it.
public struct CommandError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var exitCode: ExitCode
    public init(_ message: String, exitCode: ExitCode = .failure) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}
