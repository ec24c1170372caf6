import CLIKit
import Foundation

/// Runs `git` in the demo's working copy, when git is installed.
struct Git {
    let directory: URL
    let executable: URL

    init?(directory: URL) {
        let candidates = ["/usr/bin/git", "/usr/local/bin/git", "/opt/homebrew/bin/git"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        self.directory = directory
        executable = URL(fileURLWithPath: path)
    }

    func run(_ arguments: [String]) throws(CommandError) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-c", "user.name=retention-sync demo", "-c", "user.email=demo@example.invalid",
                             "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"] + arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw CommandError("demo: cannot run git: \(error)") }
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw CommandError("demo: 'git \(arguments.joined(separator: " "))' failed with status \(process.terminationStatus)")
        }
    }

    func commit(_ message: String, all: Bool) throws(CommandError) {
        if !all { try run(["add", "."]) }
        try run(["commit", "-q"] + (all ? ["-a"] : []) + ["-m", message])
    }
}
