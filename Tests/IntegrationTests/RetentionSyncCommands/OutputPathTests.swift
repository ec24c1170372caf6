@testable import CLIKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

/// `--out`, `--snapshot-out` and `--report` write where the user points, and never replace what
/// is there when it is not a regular file.
@Suite("Writing output files")
struct OutputPathTests {
    @Test("plan --out through a symbolic link writes the link's target and keeps the link")
    func symbolicLinkKept() async throws {
        let harness = try CommandHarness()
        let target = harness.file("real-plan.json")
        try Data("old".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: harness.file("plan.json"), withDestinationURL: target)

        let run = await harness.run(["plan", "--env", "sandbox", "--out", "plan.json"])
        #expect(run.code != .failure, "\(run.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: harness.file("plan.json").path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        let written = try String(contentsOf: target, encoding: .utf8)
        #expect(written.contains("\"format_version\""))
    }

    @Test("plan --snapshot-out - prints the snapshot apply would publish on standard output")
    func snapshotToStandardOutput() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "json", "--snapshot-out", "-"])
        #expect(run.code != .failure, "\(run.stderr)")
        #expect(run.stdout.contains("\"schemaVersion\""), "the snapshot follows the plan on standard output")
    }

    @Test("plan --out into a FIFO writes into the pipe and leaves the FIFO in place")
    func fifoKept() async throws {
        let harness = try CommandHarness()
        let fifo = harness.file("plan.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let received = harness.file("received.json")
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo.path, received.path]
        try reader.run()

        let run = await harness.run(["plan", "--env", "sandbox", "--out", "plan.fifo"])
        // Bounded: if the FIFO was replaced, the reader would wait for a writer forever.
        let deadline = Date().addingTimeInterval(10)
        while reader.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if reader.isRunning {
            reader.terminate()
            Issue.record("nothing was written into the FIFO")
        }
        reader.waitUntilExit()
        #expect(run.code != .failure, "\(run.stderr)")
        var info = stat()
        #expect(lstat(fifo.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(try String(contentsOf: received, encoding: .utf8).contains("\"format_version\""))
    }

    @Test("--out - writes the saved plan to standard output")
    func dashIsStandardOutput() throws {
        let context = CommandContext(console: CapturedConsole().console, environment: [:],
                                     currentDirectory: FileManager.default.temporaryDirectory)
        #expect(try OutputFile.destination(for: "-", context: context) == .standardOutput)
        #expect(try OutputFile.destination(for: "/dev/null", context: context) == .writeInPlace(URL(fileURLWithPath: "/dev/null")))
    }

    @Test("a directory given as --out is refused with a message that says so")
    func directoryRefused() async throws {
        let harness = try CommandHarness()
        try FileManager.default.createDirectory(at: harness.file("reports"), withIntermediateDirectories: true)
        let run = await harness.run(["plan", "--env", "sandbox", "--out", "reports"])
        #expect(run.code == .failure)
        #expect(run.stderr.contains("cannot write reports: it is a directory"))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: harness.file("reports").path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}

@Suite("Output files into a folder that does not exist yet")
struct MissingFolderOutputTests {
    @Test("plan --out and apply --report both create the missing folder, as every output option does")
    func outAndReportCreateFolders() async throws {
        let harness = try CommandHarness()
        let plan = await harness.run(["plan", "--env", "sandbox", "--out", "new/plans/sandbox.json"])
        #expect(plan.code == .success, "\(plan.stderr)")
        #expect(FileManager.default.fileExists(atPath: harness.file("new/plans/sandbox.json").path))
        let apply = await harness.run(["apply", "--env", "sandbox", "--auto-approve", "--report", "new/reports/apply.json"])
        #expect(apply.code == .success, "\(apply.stderr)")
        #expect(FileManager.default.fileExists(atPath: harness.file("new/reports/apply.json").path))
    }
}
