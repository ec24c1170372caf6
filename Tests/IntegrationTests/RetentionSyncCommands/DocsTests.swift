import CLIKit
import Foundation
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

/// The manual (README.md and docs/) is kept honest the way the code is: every command and flag has
/// its page, every relative link leads somewhere, and every example marked to run does run.
@Suite("The manual keeps up with the tool")
struct DocsTests {
    static let root = CommandHarness.repository

    /// Every Markdown page of the manual, relative to the repository's root.
    static func pages() throws -> [String] {
        let docs = root.appendingPathComponent("docs")
        let found = FileManager.default.enumerator(atPath: docs.path)?.compactMap { $0 as? String } ?? []
        return ["README.md"] + found.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }

    @Test("every command has a page in docs/commands that names every flag its --help lists")
    func everyFlagIsDocumented() throws {
        for command in CLI.commands {
            let page = "docs/commands/\(command.name).md"
            guard let text = try? Repository.text(page) else {
                Issue.record("\(page) is missing: every command has a page")
                continue
            }
            #expect(text.hasPrefix("# "), "\(page) starts with its title")
            for option in command.options {
                #expect(text.contains("`\(option.name)"), "\(page) does not document \(option.name)")
            }
        }
        let index = try Repository.text("docs/commands/README.md")
        for command in CLI.commands {
            #expect(index.contains("(\(command.name).md)"), "docs/commands/README.md does not link \(command.name)")
        }
    }

    @Test("every relative link in README.md and docs/ leads to a file that exists, and to a heading that exists")
    func linksResolve() throws {
        let link = /\]\(([^)\s]+)\)/
        for page in try Self.pages() {
            let base = page.split(separator: "/").dropLast().map(String.init)
            for line in Self.prose(of: try Repository.text(page)) {
                for match in line.matches(of: link) {
                    let target = String(match.output.1)
                    if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let file = String(parts[0])
                    let resolved = file.isEmpty ? page : Self.join(base, file)
                    guard let resolved, FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(resolved).path) else {
                        Issue.record("\(page): the link \(target) leads nowhere in the repository")
                        continue
                    }
                    if parts.count == 2, resolved.hasSuffix(".md") {
                        let anchors = Self.anchors(in: try Repository.text(resolved))
                        #expect(anchors.contains(String(parts[1])), "\(page): \(target) names no heading of \(resolved)")
                    }
                }
            }
        }
    }

    /// `folder` (as path components) and a relative path joined, `..` resolved; nil when it climbs out of the repository.
    static func join(_ folder: [String], _ relative: String) -> String? {
        var parts = folder
        for part in relative.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            } else {
                parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }

    /// The lines of a page outside fenced code blocks.
    static func prose(of text: String) -> [Substring] {
        var inCode = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") { inCode.toggle(); return false }
            return !inCode
        }
    }

    /// GitHub's anchors: headings lower-cased, punctuation dropped, spaces as hyphens.
    static func anchors(in text: String) -> Set<String> {
        var anchors = Set<String>()
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            let heading = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            let kept = heading.unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }
            anchors.insert(String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-"))
        }
        return anchors
    }

    /// The shell blocks a page marks with `<!-- runs -->` on the line before them.
    static func runnableBlocks(in text: String) -> [String] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [String] = []
        var index = 0
        while index < lines.count {
            if lines[index] == "<!-- runs -->", index + 1 < lines.count, lines[index + 1] == "```sh" {
                var body: [String] = []
                index += 2
                while index < lines.count, lines[index] != "```" {
                    body.append(lines[index])
                    index += 1
                }
                blocks.append(body.joined(separator: "\n"))
            }
            index += 1
        }
        return blocks
    }

    @Test("every example marked to run runs, in a copy of the example app, with the retention-sync the tests built")
    func examplesRun() async throws {
        let binary = try ChildProcess.binary().deletingLastPathComponent()
        var ran = 0
        for page in try Self.pages() {
            for (number, block) in Self.runnableBlocks(in: try Repository.text(page)).enumerated() {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("docs-example-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                try FileManager.default.copyItem(at: Self.root.appendingPathComponent("manifests"),
                                                 to: folder.appendingPathComponent("manifests"))
                try? FileManager.default.removeItem(at: folder.appendingPathComponent("manifests/.retention-sync"))
                let script = folder.appendingPathComponent("example.sh")
                try ("set -euo pipefail\n" + block + "\n").write(to: script, atomically: true, encoding: .utf8)
                let (status, output) = try await onOwnThread { () throws -> (Int32, String) in
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/bin/bash")
                    process.arguments = [script.path]
                    process.currentDirectoryURL = folder
                    process.environment = ["PATH": "\(binary.path):/usr/bin:/bin", "HOME": folder.path, "NO_COLOR": "1",
                                           "TMPDIR": folder.path]
                    let pipe = Pipe()
                    process.standardOutput = pipe
                    process.standardError = pipe
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
                }
                #expect(status == 0, "\(page), runnable block \(number + 1) failed:\n\(block)\n---\n\(output.suffix(2000))")
                ran += 1
            }
        }
        #expect(ran >= 3, "the manual marks at least its getting-started examples to run")
    }
}
