import CLIKit
import Foundation
import TestSupport
import RetentionSyncCommands
import Testing

private func run(_ arguments: [String], in directory: URL) async -> (code: ExitCode, out: String, err: String) {
    let captured = CapturedConsole()
    let context = CommandContext(console: captured.console, environment: [:], currentDirectory: directory)
    let code = await CLI.run(arguments, context: context)
    return (code, captured.stdout, captured.stderr)
}

private func temporaryDirectory() throws -> URL { try temporaryFolder("init") }

@Suite("retention-sync init")
struct InitCommandTests {
    @Test("writes a small app that validate accepts with nothing to report")
    func writesValidApp() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let created = await run(["init", "my-app"], in: work)
        #expect(created.code == .success)
        #expect(created.out == """
        Wrote a starting app to my-app:
          my-app/.gitignore
          my-app/app.yaml
          my-app/messages.yaml
          my-app/defaults.yaml
          my-app/cancel-flow.yaml
          my-app/retention-sync.schema.json

        Next: retention-sync validate --manifests my-app

        """)
        let validated = await run(["validate", "--manifests", "my-app", "--strict"], in: work)
        #expect(validated.code == .success)
        #expect(validated.out == "my-app: no problems (1 product, 0 images, 1 message in 1 localization, 1 default, 1 flow)\n")
    }

    @Test("init's .gitignore keeps local state and events out of git, and validate warns when they are tracked anyway")
    func stateStaysOutOfGit() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        // Waited for on a thread of its own: a test's thread is one of the few that async tests share.
        func git(_ arguments: String...) async throws {
            let status = try await onOwnThread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["git", "-C", work.path, "-c", "user.name=t", "-c", "user.email=t@example.com"] + arguments
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                return process.terminationStatus
            }
            #expect(status == 0, "git \(arguments)")
        }
        try await git("init", "-q")
        #expect(await run(["init", "app"], in: work).code == .success)
        let state = work.appendingPathComponent("app/.retention-sync/events/v1")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: state.appendingPathComponent("segment.ndjson"))
        // `git add` of the app leaves the state folder out.
        try await git("add", "app")
        let clean = await run(["validate", "--manifests", "app", "--strict"], in: work)
        #expect(clean.code == .success, "\(clean.out)\(clean.err)")
        // Forced in, it is warned about, with the way out; --strict fails on it.
        try await git("add", "-f", "app/.retention-sync")
        let warned = await run(["validate", "--manifests", "app", "--strict"], in: work)
        #expect(warned.code == .failure)
        #expect(warned.out.contains("warning: git tracks 1 file in app/.retention-sync/ (local state, and decision events with keyed customer pseudonyms)"), "\(warned.out)")
        #expect(warned.out.contains("git rm -r --cached app/.retention-sync"), "\(warned.out)")
    }

    @Test("writes the same JSON Schema the example app ships")
    func writesSchema() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        _ = await run(["init", "app"], in: work)
        let root = Repository.root
        let written = try Data(contentsOf: work.appendingPathComponent("app/retention-sync.schema.json"))
        let shipped = try Data(contentsOf: root.appendingPathComponent("manifests/retention-sync.schema.json"))
        #expect(written == shipped)
    }

    @Test("refuses a directory that is not empty, and changes nothing in it")
    func refusesNonEmpty() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        try Data("keep me".utf8).write(to: work.appendingPathComponent("app.yaml"))
        let result = await run(["init", "."], in: work)
        #expect(result.code == .failure)
        #expect(result.err == "error: '.' is not empty; init only writes into an empty or new directory\n")
        #expect(try String(contentsOf: work.appendingPathComponent("app.yaml"), encoding: .utf8) == "keep me")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["app.yaml"])
    }

    @Test("accepts an existing empty directory")
    func acceptsEmpty() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let result = await run(["init", work.path], in: URL(fileURLWithPath: "/"))
        #expect(result.code == .success)
    }

    @Test("without a directory it is a usage error")
    func needsDirectory() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let result = await run(["init"], in: work)
        #expect(result.code == .usage)
    }
}
