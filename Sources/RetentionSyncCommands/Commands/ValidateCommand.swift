import CLIKit
import Foundation
import Manifests
import Views

struct ValidateCommand: ParsedCommand {
    static let name = "validate"
    static let summary = "Check manifests offline"
    static let manifests = Option.manifests()
    static let format = Option("--format", value: "FORMAT", of: DiagnosticFormat.self, default: .text, help: [
        "text: file:line:column: error: message, with hints;",
        "json: a versioned JSON object for scripts;",
        "github: GitHub Actions annotations on the pull request's lines.",
    ])
    static let strict = Option("--strict", help: ["Fail on warnings too."])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync validate [--manifests DIR] [--format text|json|github] [--strict]",
        about: """
        Checks the manifests in DIR (default: manifests) offline against Apple's rules: text lengths,
        locales, images, references, locale coverage and limits. Every problem is reported in one run.
        """,
        options: [manifests, format, strict], column: 18,
        footer: "Exit status: 0 when there are no errors (and, with --strict, no warnings), 1 otherwise.")

    struct Options: CommandOptions {
        var directory: String
        var format: DiagnosticFormat
        var strict: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(directory: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                format: try arguments.value(Self.format, as: DiagnosticFormat.self) ?? .text,
                strict: arguments.flag(Self.strict))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        var (set, diagnostics) = ManifestLoader.loadAndValidate(directory: context.url(options.directory), displayPath: options.directory)
        if let tracked = TrackedState.warning(manifests: context.url(options.directory), displayPath: options.directory) {
            diagnostics.append(tracked)
        }
        let output = DiagnosticRenderer.render(diagnostics, format: options.format, color: context.console.useColor,
                                               source: context.console.isTerminal ? { try? String(contentsOf: context.url($0), encoding: .utf8) } : nil)
        context.console.write(output)
        if options.format == .text && diagnostics.isEmpty, let set {
            context.console.print("\(options.directory): no problems (\(describe(set)))")
        }
        let failed = diagnostics.hasErrors || (options.strict && !diagnostics.isEmpty)
        return failed ? .failure : .success
    }

    private static func describe(_ set: ManifestSet) -> String {
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        let uploads = set.messages.reduce(0) { $0 + $1.localizations.count }
        return [count(set.app.products.count, "product"), count(set.images.count, "image"),
                count(set.messages.count, "message") + " in \(count(uploads, "localization"))",
                count(set.defaults.count, "default"), count(set.flows.count, "flow")].joined(separator: ", ")
    }
}

/// The default file store (`<manifests>/.retention-sync/`) holds local state and decision events with
/// keyed customer pseudonyms: `validate` warns when git tracks anything in it.
enum TrackedState {
    static let folder = ".retention-sync"

    static func warning(manifests: URL, displayPath: String) -> Diagnostic? {
        let state = manifests.appendingPathComponent(folder)
        guard FileManager.default.fileExists(atPath: state.path), let tracked = trackedFiles(in: state), !tracked.isEmpty else { return nil }
        let shown = displayPath.hasSuffix("/") ? displayPath + folder : displayPath + "/" + folder
        return .warning("state-tracked-by-git", at: nil,
                        "git tracks \(tracked.count) file\(tracked.count == 1 ? "" : "s") in \(shown)/ (local state, and decision events with keyed customer pseudonyms)",
                        hint: "run 'git rm -r --cached \(shown)' and add '\(folder)/' to \(displayPath.hasSuffix("/") ? displayPath : displayPath + "/").gitignore; a team keeps state and events in S3 (environments.<env>.stateStore)")
    }

    /// The files git tracks under `folder`, or nil when git is absent or the folder is in no repository.
    static func trackedFiles(in folder: URL) -> [String]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder.path, "ls-files", "-z", "--", "."]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
