@testable import CLIKit
import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif
@testable import RetentionSyncCommands
import Testing

/// A file that cannot be read or written is named, with what failed and what to do — never a
/// Foundation or DecodingError dump.
@Suite("File-system errors, in words")
struct FileErrorTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("file-errors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func run(_ argv: [String]) async -> (code: ExitCode, stderr: String) {
        let captured = CapturedConsole()
        let code = await CLI.run(argv, context: CommandContext(console: captured.console, environment: [:], currentDirectory: directory))
        try? FileManager.default.removeItem(at: directory)
        return (code, captured.stderr)
    }

    static let dumps = ["Error Domain", "NSCocoaErrorDomain", "DecodingError", "codingPath", "debugDescription", "UserInfo"]

    func expectReadable(_ message: String, naming path: String, _ expected: String) {
        #expect(message.contains(path), "\(message)")
        #expect(message.contains(expected), "\(message)")
        for dump in Self.dumps { #expect(!message.contains(dump), "\(message)") }
        #expect(message.hasSuffix("\n"))
    }

    @Test("applying a plan file that does not exist names it and says to check the path")
    func missingPlanFile() async {
        let result = await run(["apply", "--env", "sandbox", "--plan", "plans/missing.json"])
        #expect(result.code == .failure)
        expectReadable(result.stderr, naming: "plans/missing.json", "no such file; check the path")
    }

    @Test("applying a directory as a plan says it is a directory")
    func directoryAsPlan() async throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("plans"), withIntermediateDirectories: true)
        let result = await run(["apply", "--env", "sandbox", "--plan", "plans"])
        #expect(result.code == .failure)
        expectReadable(result.stderr, naming: "plans", "it is a directory; give the path of a file")
    }

    @Test("applying a corrupt plan file says it is not valid JSON and how to make it again")
    func corruptPlanFile() async throws {
        try Data("{\"format_version\": \"1.0\", \"act".utf8).write(to: directory.appendingPathComponent("plan.json"))
        let result = await run(["apply", "--env", "sandbox", "--plan", "plan.json"])
        #expect(result.code == .failure)
        expectReadable(result.stderr, naming: "plan.json", "not valid JSON (corrupt or cut short); make it again with 'retention-sync plan")
    }

    @Test("applying some other JSON as a plan says it is not a plan")
    func otherJSONAsPlan() async throws {
        try Data("{\"messages\": []}".utf8).write(to: directory.appendingPathComponent("status.json"))
        let result = await run(["apply", "--env", "sandbox", "--plan", "status.json"])
        expectReadable(result.stderr, naming: "status.json", "not a plan written by 'retention-sync plan --out'")
    }

    @Test("a manifest directory that is a file says so and what to pass instead")
    func manifestDirectoryIsAFile() async throws {
        try Data("kind: App\n".utf8).write(to: directory.appendingPathComponent("app.yaml"))
        let result = await run(["plan", "--env", "sandbox", "--manifests", "app.yaml"])
        #expect(result.code == .failure)
        expectReadable(result.stderr, naming: "app.yaml", "is a file, not a manifest directory")
    }

    @Test("init into a read-only directory names it and says to make it writable",
          .enabled(if: getuid() != 0, "root writes into read-only directories"))
    func readOnlyDirectory() async throws {
        let locked = directory.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path) }
        let result = await run(["init", "locked/app"])
        #expect(result.code == .failure)
        expectReadable(result.stderr, naming: "locked/app", "permission denied; make the directory writable")
    }

    @Test("a write below a file says which file is in the way")
    func fileInTheWay() throws {
        try Data().write(to: directory.appendingPathComponent("report"))
        let context = CommandContext(console: CapturedConsole().console, environment: [:], currentDirectory: directory)
        #expect(throws: CommandError.self) { try writeFile("{}", to: "report/apply.json", context: context) }
        do {
            try writeFile("{}", to: "report/apply.json", context: context)
        } catch {
            #expect(error.message.hasSuffix("report is a file, not a directory; choose another path"))
        }
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("decide names the snapshot or request it cannot read")
    func decideFiles() async throws {
        let fixtures = Repository.url("fixtures/runtime")
        let missingSnapshot = await run(["decide", "--snapshot", "published.json", "--request", "r.json"])
        expectReadable(missingSnapshot.stderr, naming: "published.json", "cannot read the runtime snapshot published.json: no such file")
        let captured = CapturedConsole()
        _ = await CLI.run(["decide", "--snapshot", "snapshot.json", "--request", "no-request.json"],
                          context: CommandContext(console: captured.console, environment: [:], currentDirectory: fixtures))
        expectReadable(captured.stderr, naming: "no-request.json", "cannot read the request no-request.json: no such file")
    }

    @Test("Foundation's and POSIX's errors map to one wording")
    func mapping() {
        #expect(FileProblem.reason(CocoaError(.fileReadNoSuchFile), path: "x", writing: false) == "no such file; check the path")
        #expect(FileProblem.reason(CocoaError(.fileWriteVolumeReadOnly), path: "x", writing: true).hasPrefix("the file system is read-only"))
        #expect(FileProblem.reason(POSIXError(.ENOSPC), path: "x", writing: true).hasPrefix("the disk is full"))
        #expect(FileProblem.reason(POSIXError(.EISDIR), path: "x", writing: false) == "it is a directory; give the path of a file")
        #expect(FileProblem.reason(CocoaError(.fileWriteNoPermission), path: "x", writing: true)
                == "permission denied; make the directory writable for this user, or choose another path")
    }
}
