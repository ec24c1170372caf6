import Foundation
import Testing
import TestSupport
import YAML

/// What a workflow scenario test needs: a temporary folder of its own, the real scripts and workflow
/// steps run by bash as a GitHub runner runs them, stand-ins for the programs a runner has and this
/// machine does not (gh, curl against GitHub, swift, retention-sync), and real git repositories.
struct Scenario: Sendable {
    /// The scenario's folder; removed by `finish()`.
    let folder: URL
    /// Stand-ins go here; it comes first on PATH.
    let bin: URL
    /// Environment every run gets, on top of this process's PATH.
    var environment: [String: String]

    init(_ name: String) throws {
        folder = try temporaryFolder("workflow-\(name)")
        bin = folder.appendingPathComponent("fake-bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        environment = [
            "PATH": "\(bin.path):\(Repository.url("scripts").path):\(path)",
            "HOME": folder.path,
            "RUNNER_TEMP": folder.appendingPathComponent("runner-temp").path,
            "GITHUB_OUTPUT": folder.appendingPathComponent("github-output").path,
            "GITHUB_PATH": folder.appendingPathComponent("github-path").path,
            "GITHUB_STEP_SUMMARY": folder.appendingPathComponent("step-summary").path,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
        ]
        try FileManager.default.createDirectory(atPath: environment["RUNNER_TEMP"]!, withIntermediateDirectories: true)
    }

    func finish() { try? FileManager.default.removeItem(at: folder) }

    func url(_ relative: String) -> URL { folder.appendingPathComponent(relative) }

    func write(_ text: String, to relative: String, executable: Bool = false) throws {
        let url = self.url(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard executable else {
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        // A program is written through a descriptor closed on exec, under a name of its own, then
        // renamed into place: a child another test forks meanwhile holds the descriptor only until
        // its own exec (microseconds), never while the program runs, which would fail with "Text file
        // busy". (It was copied by a child `cp` before; waiting for that child blocked one of the two
        // threads async tests share, and once deadlocked the suite with another blocking wait.)
        let staged = url.appendingPathExtension("staged")
        let descriptor = open(staged.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard close(descriptor) == 0, written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        guard chmod(staged.path, 0o755) == 0, rename(staged.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    func read(_ relative: String) -> String {
        (try? String(contentsOf: url(relative), encoding: .utf8)) ?? ""
    }

    /// A stand-in program on PATH: a bash script.
    func fake(_ name: String, _ script: String) throws {
        try write("#!/usr/bin/env bash\n" + script, to: "fake-bin/\(name)", executable: true)
    }

    /// The `key=value` lines the steps wrote to $GITHUB_OUTPUT (the last one for a key wins).
    var outputs: [String: String] {
        var values: [String: String] = [:]
        for line in read("github-output").split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var all: String { stdout + stderr }
    }

    /// Runs a program to its end (on a thread of its own), in `directory` (default: the folder).
    @discardableResult
    func run(_ executable: String, _ arguments: [String], in directory: URL? = nil, environment extra: [String: String] = [:]) async throws -> Result {
        let environment = self.environment.merging(extra) { $1 }
        let directory = directory ?? folder
        return try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
            process.environment = environment
            process.currentDirectoryURL = directory
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Read both pipes to their ends before waiting, so a chatty child never blocks.
            let errData = Locked(Data())
            let done = DispatchSemaphore(value: 0)
            let reader = Thread {
                let data = err.fileHandleForReading.readDataToEndOfFile()
                errData.set(data)
                done.signal()
            }
            reader.start()
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            done.wait()
            return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData.value, as: UTF8.self))
        }
    }

    /// Runs a `run:` block as GitHub's runner does for `shell: bash` (`bash --noprofile --norc -eo pipefail FILE`).
    func runStep(_ script: String, in directory: URL? = nil, environment extra: [String: String] = [:]) async throws -> Result {
        let file = url("step-\(UUID().uuidString).sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try await run("bash", ["--noprofile", "--norc", "-eo", "pipefail", file.path], in: directory, environment: extra)
    }

    /// git in `directory`; fails the test when git does.
    @discardableResult
    func git(_ arguments: String..., in directory: URL) async throws -> String {
        let result = try await run("git", arguments, in: directory)
        #expect(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The steps of the workflow and action files, read as the runner reads them.
enum WorkflowFile {
    static func root(_ path: String) throws -> YAMLNode {
        try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
    }

    /// The steps of a workflow's only job, or of a composite action.
    static func steps(_ path: String) throws -> [YAMLNode] {
        let root = try root(path)
        if case .sequence(let steps)? = root["runs"]?["steps"]?.kind { return steps }
        guard case .mapping(let jobs)? = root["jobs"]?.kind, let job = jobs.first?.value,
              case .sequence(let steps)? = job["steps"]?.kind else {
            Issue.record("\(path) has no steps"); return []
        }
        return steps
    }

    static func step(_ path: String, named name: String) throws -> YAMLNode {
        try #require(try steps(path).first { $0["name"]?.scalar?.text == name }, "\(path) has no step '\(name)'")
    }

    /// The `run:` script of a named step.
    static func script(_ path: String, step name: String) throws -> String {
        try #require(try step(path, named: name)["run"]?.scalar?.text, "\(path): step '\(name)' runs nothing")
    }
}
