/// A small, strict command-line reader: options may be written `--name value` or `--name=value`;
/// anything left unread when a command calls `finish()` is a usage error.
public struct Arguments: Sendable {
    private var remaining: [String]

    public init(_ arguments: [String]) { remaining = arguments }

    public var isEmpty: Bool { remaining.isEmpty }

    /// Removes and returns the value of `--name`, or nil when absent.
    public mutating func option(_ name: String) throws(CommandError) -> String? {
        var found: String?
        var index = 0
        while index < remaining.count {
            let argument = remaining[index]
            if argument == "--" { break }
            if argument == name {
                guard index + 1 < remaining.count else {
                    throw CommandError("\(name) needs a value", exitCode: .usage)
                }
                found = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
            } else if argument.hasPrefix(name + "=") {
                found = String(argument.dropFirst(name.count + 1))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// Removes `--name` and tells whether it was there.
    public mutating func flag(_ name: String) -> Bool {
        let before = remaining.count
        remaining.removeAll { $0 == name }
        return remaining.count != before
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
