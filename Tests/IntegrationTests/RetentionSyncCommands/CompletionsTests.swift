import CLIKit
import Foundation
@testable import RetentionSyncCommands
import Testing
import TestSupport

/// `retention-sync completions SHELL` comes from the same option declarations as parsing and help.
@Suite("Shell completions")
struct CompletionsTests {
    func script(_ shell: String) async -> (code: ExitCode, text: String, stderr: String) {
        let captured = CapturedConsole()
        let code = await CLI.run(["completions", shell], context: CommandContext(console: captured.console, environment: [:],
                                                                                 currentDirectory: URL(fileURLWithPath: "/")))
        return (code, captured.stdout, captured.stderr)
    }

    @Test("each shell's script names every command and every option", arguments: ["bash", "zsh", "fish"])
    func namesEverything(shell: String) async {
        let run = await script(shell)
        #expect(run.code == .success)
        #expect(run.stderr.isEmpty)
        for command in CLI.commands {
            #expect(run.text.contains(command.name), "\(shell): \(command.name)")
            for option in command.options {
                // fish spells long options without the dashes (`-l env`).
                let spelling = shell == "fish" ? "-l \(option.name.dropFirst(2))" : option.name
                #expect(run.text.contains(spelling), "\(shell): \(command.name) \(option.name)")
                for choice in option.choices { #expect(run.text.contains(choice), "\(shell): \(option.name) \(choice)") }
            }
        }
    }

    @Test("the emulator's --environment alias is completed too", arguments: ["bash", "zsh", "fish"])
    func aliases(shell: String) async {
        #expect(await script(shell).text.contains(shell == "fish" ? "-l environment" : "--environment"))
    }

    static func installed(_ shell: String) -> String? {
        ["/bin/\(shell)", "/usr/bin/\(shell)", "/usr/local/bin/\(shell)", "/opt/homebrew/bin/\(shell)"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func checkSyntax(_ shell: String, text: String) async throws -> (status: Int32, errors: String)? {
        try await onOwnThread { try Self.syntax(shell, text: text) }
    }

    /// Blocks until the shell has read the script: called on a thread of its own.
    static func syntax(_ shell: String, text: String) throws -> (status: Int32, errors: String)? {
        guard let path = Self.installed(shell) else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString).\(shell)")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-n", file.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test("the bash script is valid bash (bash -n)")
    func bashSyntax() async throws {
        let result = try #require(try await checkSyntax("bash", text: await script("bash").text),
                                  "bash is missing: run bash .ci/setup --test, which installs it")
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test("the zsh script is valid zsh (zsh -n)")
    func zshSyntax() async throws {
        let result = try #require(try await checkSyntax("zsh", text: await script("zsh").text),
                                  "zsh is missing: run bash .ci/setup --test, which installs it")
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test("the fish script is valid fish (fish -n)")
    func fishSyntax() async throws {
        let result = try #require(try await checkSyntax("fish", text: await script("fish").text),
                                  "fish is missing: run bash .ci/setup --test, which installs it")
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test("sourcing the bash script registers completion for retention-sync, and completing 'plan --env ' offers the environments")
    func bashCompletesValues() async throws {
        let text = await script("bash").text
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString).bash")
        try Data((text + """

        COMP_WORDS=(retention-sync plan --env "")
        COMP_CWORD=3
        _retention_sync
        echo "${COMPREPLY[*]}"
        COMP_WORDS=(retention-sync pl)
        COMP_CWORD=1
        _retention_sync
        echo "${COMPREPLY[*]}"
        COMP_WORDS=(retention-sync apply --pr)
        COMP_CWORD=2
        _retention_sync
        echo "${COMPREPLY[*]}"

        """).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let completed = try await onOwnThread { () throws -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [file.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let lines = completed.split(separator: "\n")
        #expect(lines == ["sandbox production", "plan", "--prune --prune-force --prune-id --prune-grace"])
    }

    @Test("an unknown shell is a usage error that lists the shells")
    func unknownShell() async {
        let run = await script("tcsh")
        #expect(run.code == .usage)
        #expect(run.stderr == "error: SHELL must be bash, zsh or fish, not 'tcsh'\n")
    }
}
