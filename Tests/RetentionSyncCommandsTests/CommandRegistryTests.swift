import CLIKit
import Emulator
import Foundation
@testable import RetentionSyncCommands
import Testing

/// What a documentation generator reads: every command and flag with its help text and default,
/// from the declarations parsing and `--help` use.
@Suite("The command registry")
struct CommandRegistryTests {
    @Test("every command lists its options, each with help text, and help prints each declared default")
    func everyOptionIsDocumented() {
        let all = CommandRegistry.all
        #expect(all.map(\.name) == CLI.commands.map { $0.name })
        for entry in all {
            let help = CLI.commands.first { $0.name == entry.name }?.help ?? ""
            for option in entry.options {
                #expect(!option.help.isEmpty, "\(entry.name) \(option.name)")
                #expect(help.contains(option.label), "\(entry.name) \(option.name)")
                if let value = option.defaultValue {
                    #expect(help.contains("default: \(value))"), "\(entry.name) \(option.name)")
                }
            }
        }
    }

    @Test("a default that is a value is declared, never only written in the help text")
    func noDefaultInProse() {
        let prose = /\(default:? [0-9]/
        for entry in CommandRegistry.all {
            for option in entry.options {
                let text = option.help.joined(separator: " ")
                #expect(text.firstMatch(of: prose) == nil,
                        "\(entry.name) \(option.name) words its default in its help; declare it (default:) so help prints it")
            }
        }
    }

    @Test("the emulator's performance-test defaults are printed from the settings it runs with")
    func emulatorDefaults() throws {
        var arguments = try Arguments([], options: EmulatorCommand.options)
        let options = try EmulatorCommand.parse(&arguments, context: CommandContext(console: CapturedConsole().console, environment: [:],
                                                                                  currentDirectory: FileManager.default.temporaryDirectory))
        #expect(options.testSettings == .default)
        let printed = Dictionary(uniqueKeysWithValues: EmulatorCommand.options.compactMap { option in
            option.defaultValue.map { (option.name, $0) }
        })
        #expect(printed["--test-requests"] == "\(options.testSettings.totalRequests)")
        #expect(printed["--test-concurrency"] == "\(options.testSettings.maxConcurrentRequests)")
        #expect(printed["--test-duration"] == "\(options.testSettings.totalDuration)")
        #expect(printed["--app-apple-id"] == "\(options.appAppleId)")
    }

    @Test("--manifests is one declaration: every command that reads manifests defaults to the same directory")
    func manifestsDeclaredOnce() {
        let declarations = CommandRegistry.all.flatMap { entry in entry.options.filter { $0.name == "--manifests" } }
        #expect(declarations.count >= 7)
        for option in declarations {
            #expect(option.defaultValue == "manifests")
            #expect(option.valueName == "DIR" && option.completion == .directory)
        }
    }

    @Test("serve's defaults are printed from the values it runs with")
    func serveDefaults() {
        let serve = CommandRegistry.all.first { $0.name == "serve" }
        let defaults = Dictionary(uniqueKeysWithValues: (serve?.options ?? []).compactMap { option in
            option.defaultValue.map { (option.name, $0) }
        })
        #expect(defaults == ["--manifests": "manifests", "--listen": "127.0.0.1:8080", "--max-age": "300", "--poll-interval": "5",
                             "--max-connections": "4096", "--head-timeout": "5", "--idle-timeout": "60", "--shed-after": "500",
                             "--flush-interval": "1", "--spool-limit": "512", "--notifications-path": "/notifications",
                             "--lookup-deadline": "300"])
    }
}
