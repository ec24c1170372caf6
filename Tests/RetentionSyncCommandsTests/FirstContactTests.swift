import CLIKit
import Foundation
import TestSupport
@testable import RetentionSyncCommands
import Testing

/// What a person meets in the first minutes: the version, help, mistyped options, colour, and errors
/// that end cleanly.
@Suite("First contact with the command line")
struct FirstContactTests {
    struct Run {
        var code: ExitCode
        var stdout: String
        var stderr: String
    }

    func run(_ argv: [String], environment: [String: String] = [:], isTerminal: Bool = false) async -> Run {
        let captured = CapturedConsole(isTerminal: isTerminal, environment: environment)
        let code = await CLI.run(argv, context: CommandContext(console: captured.console, environment: environment,
                                                               currentDirectory: URL(fileURLWithPath: "/")))
        return Run(code: code, stdout: captured.stdout, stderr: captured.stderr)
    }

    @Test("retention-sync --version prints the version and exits 0")
    func versionFlag() async {
        let run = await run(["--version"])
        #expect(run.code == .success)
        #expect(run.stdout == "retention-sync \(CLI.version)\n")
        #expect(run.stderr.isEmpty)
    }

    @Test("'help' with an unknown topic is a usage error that suggests the nearest command")
    func unknownHelpTopic() async {
        let run = await run(["help", "plna"])
        #expect(run.code == .usage)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("error: no help topic 'plna' (did you mean 'plan'?)"))
        #expect(run.stderr.hasSuffix("\n"))
    }

    @Test("a mistyped option is reported with the nearest one, before a missing required option")
    func unknownOptionBeforeMissingRequired() async {
        let run = await run(["plan", "--fromat", "json"])
        #expect(run.code == .usage)
        #expect(run.stderr == "error: unknown option '--fromat' (did you mean '--format'?)\n")
    }

    @Test("a misspelt long form of a short option (--enviroment) suggests the option it begins with (--env)")
    func misspeltLongForm() async {
        let run = await run(["plan", "--enviroment", "sandbox"])
        #expect(run.code == .usage)
        #expect(run.stderr == "error: unknown option '--enviroment' (did you mean '--env'?)\n")
    }

    @Test("a mistyped option written --name=value is recognised and suggested too")
    func unknownInlineOption() async {
        let run = await run(["validate", "--manifest=manifests"])
        #expect(run.code == .usage)
        #expect(run.stderr == "error: unknown option '--manifest' (did you mean '--manifests'?)\n")
    }

    @Test("a wrong value for any choice reads the same: 'must be A or B, not X'")
    func choiceErrorsReadTheSame() async {
        let cases: [([String], String)] = [
            (["plan", "--env", "qa"], "error: --env must be sandbox or production, not 'qa'\n"),
            (["plan", "--env", "sandbox", "--format", "xml"], "error: --format must be text, markdown, json or github, not 'xml'\n"),
            (["status", "--env", "sandbox", "--format", "xml"], "error: --format must be text, markdown or json, not 'xml'\n"),
            (["id", "--format", "xml"], "error: --format must be text or json, not 'xml'\n"),
            (["validate", "--format", "xml"], "error: --format must be text, json or github, not 'xml'\n"),
            (["emulator", "--review", "later"], "error: --review must be auto or manual, not 'later'\n"),
            (["emulator", "--rate-limit", "tight"], "error: --rate-limit must be apple or off, not 'tight'\n"),
            (["decide", "--env", "qa", "--request", "r.json"], "error: --env must be sandbox or production, not 'qa'\n"),
        ]
        for (argv, expected) in cases {
            let run = await run(argv)
            #expect(run.code == .usage, "\(argv)")
            #expect(run.stderr == expected, "\(argv)")
        }
    }

    @Test("the emulator takes --env like every other command, and still --environment")
    func emulatorTakesEnv() async {
        for spelling in ["--env", "--environment"] {
            let run = await run(["emulator", spelling, "qa"])
            #expect(run.code == .usage)
            #expect(run.stderr == "error: --env must be sandbox or production, not 'qa'\n", "\(spelling)")
        }
        #expect(EmulatorCommand.options.contains { $0.name == "--env" && $0.aliases == ["--environment"] })
    }

    @Test("every error message ends with exactly one newline")
    func errorsEndWithNewline() async {
        let failing: [[String]] = [
            ["plna"], ["--bogus"], ["help", "nothing"], ["plan"], ["plan", "--env"], ["apply", "--env", "sandbox", "--plan"],
            ["init"], ["completions"], ["completions", "tcsh"], ["version", "extra"], ["validate", "--strict=yes"],
            ["decide", "--snapshot", "no-such-snapshot.json", "--request", "r.json"],
        ]
        for argv in failing {
            let run = await run(argv)
            #expect(run.code != .success, "\(argv)")
            #expect(run.stderr.hasPrefix("error: "), "\(argv)")
            #expect(run.stderr.hasSuffix("\n") && !run.stderr.hasSuffix("\n\n"), "\(argv): \(run.stderr.debugDescription)")
        }
    }

    @Test("colour: only on a terminal; NO_COLOR and --no-color turn it off; FORCE_COLOR turns it on without one")
    func colourDecision() {
        #expect(Console.useColor(isTerminal: true, environment: [:]))
        #expect(!Console.useColor(isTerminal: false, environment: [:]))
        #expect(!Console.useColor(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(!Console.useColor(isTerminal: true, environment: ["TERM": "dumb"]))
        #expect(!Console.useColor(isTerminal: true, environment: [:], noColorFlag: true))
        #expect(Console.useColor(isTerminal: false, environment: ["FORCE_COLOR": "1"]))
        #expect(!Console.useColor(isTerminal: false, environment: ["FORCE_COLOR": "0"]))
        #expect(!Console.useColor(isTerminal: false, environment: ["FORCE_COLOR": "1", "NO_COLOR": "1"]))
        #expect(!Console.useColor(isTerminal: true, environment: ["FORCE_COLOR": "1"], noColorFlag: true))
    }

    @Test("validate --no-color on a terminal prints no ANSI escape, before or after the command")
    func noColorFlag() async throws {
        let root = Repository.root
        let invalid = ["--manifests", root.appendingPathComponent("fixtures/manifests/invalid/header-too-long").path]
        let coloured = await run(["validate"] + invalid, isTerminal: true)
        #expect(coloured.stdout.contains("\u{1B}["))
        for argv in [["--no-color", "validate"] + invalid, ["validate"] + invalid + ["--no-color"]] {
            let plain = await run(argv, isTerminal: true)
            #expect(plain.code == .failure)
            #expect(!plain.stdout.contains("\u{1B}["), "\(argv)")
        }
        let forced = await run(["validate"] + invalid, environment: ["FORCE_COLOR": "1"])
        #expect(forced.stdout.contains("\u{1B}["))
    }

    @Test("every option a command's help lists is one its parser accepts, and the reverse")
    func helpListsExactlyTheDeclaredOptions() {
        for command in CLI.commands {
            for option in command.options {
                #expect(command.help.contains("  \(option.label)"), "\(command.name) \(option.name)")
                #expect((try? Arguments(option.takesValue ? [option.name, "x"] : [option.name], options: command.options)) != nil)
            }
        }
    }
}
