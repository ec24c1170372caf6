import CLIKit
import Foundation
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport
import Views

/// Every command that takes `--format`, in every format it takes (each list is the format's own
/// `allCases`, so a new format is run here the day it is added): the run succeeds, writes something,
/// and a machine format is one whole document on standard output, with nothing printed after it.
@Suite("Every command in every format")
struct EveryFormatTests {
    /// One command line and the formats its `--format` takes.
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var formats: [String]
        /// Runs before the command, on a fresh workspace (apply, for the commands that read what it wrote).
        var applyFirst = false
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["validate"], formats: DiagnosticFormat.allCases.map(\.rawValue)),
        Case(arguments: ["id", "--env", "sandbox"], formats: StatusFormat.allCases.map(\.rawValue)),
        Case(arguments: ["plan", "--env", "sandbox"], formats: PlanFormat.allCases.map(\.rawValue)),
        Case(arguments: ["plan", "--env", "sandbox", "--results"], formats: PlanFormat.allCases.map(\.rawValue)),
        Case(arguments: ["apply", "--env", "sandbox", "--auto-approve"], formats: ApplyFormat.allCases.map(\.rawValue)),
        Case(arguments: ["status", "--env", "sandbox"], formats: StatusReportFormat.allCases.map(\.rawValue), applyFirst: true),
        Case(arguments: ["state", "show", "--env", "sandbox"], formats: StatusFormat.allCases.map(\.rawValue), applyFirst: true),
        Case(arguments: ["state", "history", "--env", "sandbox"], formats: StatusFormat.allCases.map(\.rawValue), applyFirst: true),
        Case(arguments: ["results", "--env", "sandbox", "--since", "2026-11-01"], formats: ResultsFormat.allCases.map(\.rawValue),
             applyFirst: true),
    ]

    @Test("the command's output in each format is whole: JSON parses as one document, HTML is one page", arguments: cases)
    func everyFormat(_ example: Case) async throws {
        for format in example.formats {
            let harness = try CommandHarness()
            if example.applyFirst {
                let applied = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
                #expect(applied.code == .success, "\(applied.stderr)")
            }
            let run = await harness.run(example.arguments + ["--format", format])
            #expect(run.code == .success, "\(format): \(run.stderr)")
            // GitHub annotations exist only for something to annotate; every other format always writes.
            if format != "github" { #expect(!run.stdout.isEmpty, "\(format) wrote nothing") }
            switch format {
            case "json":
                #expect(throws: Never.self, "\(format) is not one JSON document: …\(run.stdout.suffix(300))") {
                    _ = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
                }
            case "html":
                #expect(run.stdout.hasPrefix("<!DOCTYPE html>") && run.stdout.hasSuffix("</html>\n"), "…\(run.stdout.suffix(200))")
            default:
                break
            }
        }
    }
}
