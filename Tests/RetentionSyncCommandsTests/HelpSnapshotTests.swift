import CLIKit
import Foundation
import RetentionSyncCommands
import Testing
import TestSupport

/// Everything a person reads in `--help` is pinned: a change to a help text shows up in review as a
/// diff of `fixtures/help/`. `UPDATE_GOLDEN=1 swift test --filter HelpSnapshot` rewrites the files and fails, so that a recording run never passes unnoticed.
@Suite("Help texts, as a person reads them")
struct HelpSnapshotTests {
    static let pages: [(file: String, arguments: [String])] =
        [("retention-sync.txt", ["--help"])] + CLI.commands.map { ("\($0.name).txt", [$0.name, "--help"]) }

    @Test("each command's --help matches its golden file", arguments: pages.map(\.file))
    func helpMatchesGolden(file: String) async throws {
        let arguments = try #require(Self.pages.first { $0.file == file }?.arguments)
        let captured = CapturedConsole()
        let code = await CLI.run(arguments, context: CommandContext(console: captured.console, environment: [:],
                                                                    currentDirectory: URL(fileURLWithPath: "/")))
        #expect(code == .success)
        #expect(captured.stderr.isEmpty)
        Golden.expect(captured.stdout, matches: "fixtures/help/\(file)")
    }

    @Test("'help COMMAND' prints the same page as 'COMMAND --help'")
    func helpCommandMatchesFlag() async {
        for command in CLI.commands {
            let viaFlag = CapturedConsole(), viaHelp = CapturedConsole()
            _ = await CLI.run([command.name, "--help"], context: CommandContext(console: viaFlag.console, environment: [:], currentDirectory: URL(fileURLWithPath: "/")))
            _ = await CLI.run(["help", command.name], context: CommandContext(console: viaHelp.console, environment: [:], currentDirectory: URL(fileURLWithPath: "/")))
            #expect(viaFlag.stdout == viaHelp.stdout, "\(command.name)")
        }
    }

    @Test("a mistyped command is a usage error that suggests the right one and lists them all")
    func unknownCommand() async {
        let captured = CapturedConsole()
        let code = await CLI.run(["plna"], context: CommandContext(console: captured.console, environment: [:], currentDirectory: URL(fileURLWithPath: "/")))
        #expect(code == .usage)
        #expect(captured.stderr.contains("unknown command 'plna' (did you mean 'plan'?)"))
        #expect(captured.stderr.contains("plan"))
    }
}
