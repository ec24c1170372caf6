public import CLIKit
import Foundation
import Manifests
public import Views

/// `validate` as a use case: loads and checks the manifests offline, adds the warning about state
/// tracked by git, and prints the diagnostics in `format`. The exit code is the result.
public enum ValidateOperation {
    /// 0 when there are no errors (and, with `strict`, no warnings); 1 otherwise.
    public static func run(directory: String, format: DiagnosticFormat, strict: Bool, context: CommandContext) -> ExitCode {
        var (set, diagnostics) = ManifestLoader.loadAndValidate(directory: context.url(directory), displayPath: directory)
        if let tracked = TrackedState.warning(manifests: context.url(directory), displayPath: directory) {
            diagnostics.append(tracked)
        }
        let output = DiagnosticRenderer.render(diagnostics, format: format, color: context.console.useColor,
                                               source: context.console.isTerminal ? { try? String(contentsOf: context.url($0), encoding: .utf8) } : nil)
        context.console.write(output)
        if format == .text && diagnostics.isEmpty, let set {
            context.console.print("\(directory): no problems (\(describe(set)))")
        }
        let failed = diagnostics.hasErrors || (strict && !diagnostics.isEmpty)
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
