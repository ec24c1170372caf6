public import Foundation

/// Places in the repository the tests read from, computed once.
public enum Repository {
    /// The repository's root folder (this file is `Tests/TestSupport/Repository.swift`).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A path below the root, e.g. `fixtures/plans`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    /// The text of a file below the root.
    public static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: url(relativePath), encoding: .utf8)
    }

    /// A test-only tool: on PATH, or installed by `.ci/setup --test` under `.build/tools/bin`.
    public static func tool(_ name: String) -> URL? {
        let local = url(".build/tools/bin/\(name)")
        if FileManager.default.isExecutableFile(atPath: local.path) { return local }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
