import Foundation
import Manifests

/// A scratch copy of fixtures/manifests/valid/base that a test edits before validating it.
struct BaseCopy {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("manifests-hostile-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("fixtures/manifests/valid/base"), to: url)
    }

    /// Replaces exactly one occurrence of `old` in `file`.
    func edit(_ file: String, _ old: String, _ new: String) throws {
        let path = url.appendingPathComponent(file)
        let text = try String(contentsOf: path, encoding: .utf8)
        precondition(text.components(separatedBy: old).count == 2, "'\(old)' must occur once in \(file)")
        try Data(text.replacingOccurrences(of: old, with: new).utf8).write(to: path)
    }

    func write(_ file: String, _ bytes: [UInt8]) throws {
        let path = url.appendingPathComponent(file)
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: path)
    }

    func validate() -> [Diagnostic] {
        ManifestLoader.loadAndValidate(directory: url, displayPath: "m").diagnostics
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Array where Element == Diagnostic {
    func with(code: String) -> [Diagnostic] { filter { $0.code == code } }
}
