import CLIKit
import Foundation
@testable import RetentionSyncCommands
import Testing
import TestSupport

/// `results` never reads a wrong path as "no traffic": a place that does not exist is an error, and
/// an existing place without events says so on standard error.
@Suite("retention-sync results on a wrong or empty place")
struct ResultsWrongPlaceTests {
    static func run(_ arguments: [String], in directory: URL) async -> (ExitCode, CapturedConsole) {
        let console = CapturedConsole()
        let code = await CLI.run(arguments, context: CommandContext(console: console.console, environment: [:], currentDirectory: directory))
        return (code, console)
    }

    @Test("--events naming a folder that does not exist is an error naming it and where serve writes")
    func missingFolderIsAnError() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("results-wrong-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (code, console) = await Self.run(["results", "--env", "sandbox", "--events", "no-such-folder"], in: directory)
        #expect(code == .failure)
        #expect(console.stderr.contains("error: no events at "), "\(console.stderr)")
        #expect(console.stderr.contains("no-such-folder: the folder does not exist"), "\(console.stderr)")
        #expect(console.stderr.contains("events/v1"), "\(console.stderr)")
        #expect(!console.stdout.contains("No customer was exposed"))
    }

    @Test("an existing folder without events says how many segments it read (none) and where events are written")
    func emptyFolderSaysSo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("results-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("events"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (code, console) = await Self.run(["results", "--env", "sandbox", "--events", "events"], in: directory)
        #expect(code == .success)
        #expect(console.stderr.contains("note: no event segments under "), "\(console.stderr)")
        #expect(console.stderr.contains("(0 read)"), "\(console.stderr)")
        // Every format carries it as a warning too, so a job summary or page cannot read as "0 customers".
        for format in ["text", "markdown", "json", "html"] {
            let (_, shown) = await Self.run(["results", "--env", "sandbox", "--events", "events", "--format", format], in: directory)
            #expect(shown.stdout.contains("no event segments were read for sandbox"), "\(format): \(shown.stdout.prefix(600))")
        }
    }
}
