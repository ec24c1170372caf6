import CLIKit
import Foundation
@testable import RetentionSyncCommands
import StateLocations
import Testing
import TestSupport
import Views

/// Option values parse themselves: each kind of value is read in one place, a bad one is a usage
/// error while the command line is read, and what help prints as a default is what the command runs with.
@Suite("Option values")
struct ArgumentValueTests {
    static let root = URL(fileURLWithPath: "/")

    @Test("a declared default reads back as the value the command runs with, from the text help prints")
    func declaredDefaultsParse() throws {
        var serve = Arguments([])
        #expect(try serve.value(ServeCommand.listen, as: ListenAddress.self) == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(try serve.value(ServeCommand.maxAge, as: Seconds.self) == Seconds(300))
        #expect(try serve.value(ServeCommand.shedAfter, as: Milliseconds.self)?.seconds == 0.5)
        var plan = Arguments([])
        #expect(try plan.value(PlanCommand.markdownMaxChars, as: Int.self) == 65_000)
    }

    @Test("an enum's choices come from its cases, and a wrong one reads 'must be A or B, not X'")
    func choices() throws {
        #expect(StatusReportFormat.allValueStrings == ["text", "markdown", "json"])
        #expect(try PlanFormat(argument: "GitHub") == .github)
        var arguments = Arguments(["--format", "xml"])
        #expect(throws: CommandError.self) { try arguments.value(StatusCommand.format, as: StatusReportFormat.self) }
        do {
            var again = Arguments(["--format", "xml"])
            _ = try again.value(StatusCommand.format, as: StatusReportFormat.self)
        } catch {
            #expect(error.message == "--format must be text, markdown or json, not 'xml'")
            #expect(error.exitCode == .usage)
        }
    }

    @Test("listen addresses, seconds, lists and dates are read by their types")
    func plainValues() throws {
        #expect(try ListenAddress(argument: "[::]:8443") == ListenAddress(host: "::", port: 8443))
        #expect(try ListenAddress(argument: ":9000") == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(throws: ArgumentError.self) { try ListenAddress(argument: "8443") }
        #expect(throws: ArgumentError.self) { try Seconds(argument: "-1") }
        #expect(try ArgumentList<String>(argument: "a.pem,,b.pem,a.pem").elements == ["a.pem", "b.pem"])
        #expect(throws: ArgumentError.self) { try ArgumentList<String>(argument: ",") }
        #expect(try DateArgument(argument: "2026-11-01").milliseconds == 1_793_491_200_000)
        #expect(throws: ArgumentError.self) { try DateArgument(argument: "yesterday") }
        #expect(try TimeSpan(argument: "1h30m").seconds == 5400)
    }

    @Test("a relative state location is resolved against the command's working directory, not the process's")
    func locationsAreRelativeToTheCommand() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("argument-values-\(UUID().uuidString)")
        var arguments = Arguments(["--state-store", "state/sandbox.json"])
        let location = try arguments.value(EnvironmentOptions.stateStoreOption, as: StateLocation.self, relativeTo: folder)
        #expect(location?.description.hasSuffix("/state/sandbox.json") == true)
        #expect(location?.description.contains(folder.lastPathComponent) == true)
    }

    @Test("a bad --state-store is a usage error before any manifest is read or request sent")
    func stateStoreIsCheckedWhileParsing() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("argument-values-\(UUID().uuidString)")
        for command in ["plan", "status", "outcomes"] {
            let console = CapturedConsole()
            let code = await CLI.run([command, "--env", "sandbox", "--state-store", "ftp://state"],
                                     context: CommandContext(console: console.console, environment: [:], currentDirectory: empty))
            #expect(code == .usage, "\(command)")
            #expect(console.stderr.contains("--state-store state store 'ftp://state'"), "\(command): \(console.stderr)")
        }
    }

    @Test("an outcomes action is read as a word it knows: a wrong one or none is a usage error naming pull")
    func outcomesActionIsTyped() async throws {
        for (words, message) in [(["outcomes", "fetch"], "unknown outcomes action 'fetch'; the action is 'pull'"),
                                 (["outcomes"], "outcomes needs an action: retention-sync outcomes pull --env ENV --root FILE")] {
            let console = CapturedConsole()
            let code = await CLI.run(words + ["--env", "sandbox"],
                                     context: CommandContext(console: console.console, environment: [:], currentDirectory: Self.root))
            #expect(code == .usage, "\(words)")
            #expect(console.stderr.contains(message), "\(words): \(console.stderr)")
        }
    }

    @Test("serve's old --snapshot-store spelling still names its snapshot file, with one line saying to write --snapshot")
    func serveSnapshotStoreIsDeprecated() async throws {
        let console = CapturedConsole()
        // Without --root the command stops at its usage check, after the notice.
        let code = await CLI.run(["serve", "--env", "production", "--snapshot-store", "s.json"],
                                 context: CommandContext(console: console.console, environment: [:],
                                                         currentDirectory: FileManager.default.temporaryDirectory))
        #expect(code == .usage)
        let notices = console.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: --snapshot-store") }
        #expect(notices == ["warning: --snapshot-store is deprecated here; write --snapshot FILE (elsewhere --snapshot-store means --state-store)"])
        var arguments = try Arguments(["--env", "production", "--root", "r.pem", "--snapshot-store", "s.json"], options: ServeCommand.options)
        let options = try ServeCommand.parse(&arguments, context: CommandContext(console: console.console, environment: [:],
                                                                                currentDirectory: Self.root))
        #expect(options.sources.snapshotFile == "s.json")
        #expect(!CLI.completions.script(for: .bash).contains("--snapshot-store FILE"))
    }

    @Test("--snapshot-store means --state-store in every command but serve's deprecated spelling")
    func snapshotStoreHasOneMeaning() {
        var commands: [String] = []
        for entry in CommandRegistry.all where entry.name != "serve" {
            for option in entry.options where option.spellings.contains(StateStoreOption.oldSpelling) {
                #expect(option.name == "--state-store", "\(entry.name)")
                commands.append(entry.name)
            }
        }
        // The commands that read a state store all accept the old spelling, as the same option.
        #expect(Set(commands).isSuperset(of: ["plan", "apply", "status", "state"]), "\(commands)")
    }
}
