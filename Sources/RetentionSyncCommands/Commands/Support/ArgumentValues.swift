import Basics
public import CLIKit
import Emulator
import Experiments
import Foundation
import Reconciler
import RetentionMessagingModels
import StateLocations
public import Views

// The project's values as options take them, each read in this one place.

extension Environment: ArgumentValue {}
extension ReviewMode: ArgumentValue {}
extension ResultsBreakdown: ArgumentValue {}

/// `--state-store`, `--events`, `--from`: `s3://bucket/prefix`, `file:///path` or a path, relative to
/// the command's working directory.
extension StateLocation: ArgumentValue {
    init(argument text: String) throws(ArgumentError) {
        self = try Self.parse(text, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    }

    static func parse(_ text: String, relativeTo directory: URL) throws(ArgumentError) -> StateLocation {
        do {
            return try StateLocation.parse(text, from: .commandLine(workingDirectory: directory))
        } catch {
            throw .reason(error.description)
        }
    }

    var argumentDescription: String { description }
}

/// `--refresh-defaults`: a number of recorded pairs, 0 or more, or `all`.
extension DefaultsRefresh: ArgumentValue {
    init(argument text: String) throws(ArgumentError) {
        if text == "all" {
            self = .all
            return
        }
        guard let count = Int(text), count >= 0 else { throw .reason("takes a number of pairs (0 or more) or 'all', not '\(text)'") }
        self = .window(count)
    }

    var argumentDescription: String { description }
}

/// `--listen`: `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` for every IPv4 interface.
struct ListenAddress: ArgumentValue, Hashable {
    var host: String
    var port: UInt16

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    init(argument text: String) throws(ArgumentError) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw .reason("\(text): expected HOST:PORT, e.g. 0.0.0.0:8443 or [::]:8443")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.init(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }

    var argumentDescription: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// `--since`, `--until`, `--as-of`: a day (`2026-11-01`, midnight UTC) or an ISO 8601 time.
///
/// The one place a command-line date is read: a day (`2026-11-01`) or an RFC 3339 time, in UTC.
struct DateArgument: ArgumentValue, Hashable {
    var time: UTCTime

    init(argument text: String) throws(ArgumentError) {
        guard let time = UTCTime.parse(text, exactly: .date) ?? (try? UTCTime.parse(text)) else {
            throw .isNot("a date: write 2026-11-01 or 2026-11-01T12:00:00Z")
        }
        self.time = time
    }

    /// Milliseconds since 1970, as events count time.
    var milliseconds: Int64 { time.milliseconds }
    var argumentDescription: String { time.formatted(.seconds) }
}

/// `--forward-notifications`: an absolute http(s) URL.
struct HTTPURLArgument: ArgumentValue, Hashable {
    var url: URL

    init(argument text: String) throws(ArgumentError) {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw .reason("\(text): give an http(s) URL")
        }
        self.url = url
    }

    var argumentDescription: String { url.absoluteString }
}
extension DiagnosticFormat: ArgumentValue {}
