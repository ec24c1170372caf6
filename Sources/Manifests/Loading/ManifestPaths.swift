import Foundation

/// Resolves paths written in manifests the way the file system will, symlinks included, so a path
/// that escapes the manifest directory is caught before anything is read from it or written to it.
enum ManifestPaths {
    /// The absolute path `written` names (relative to `directory`), with every symlink followed —
    /// dangling ones too, since a later write would follow them — and `.`/`..` applied after that.
    /// Nil when the links loop.
    static func resolve(_ written: String, in directory: URL) -> String? {
        let start = written.hasPrefix("/") ? written : directory.path + "/" + written
        var queue = Array(start.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed())
        var current: [String] = []
        var hops = 0
        while let component = queue.popLast() {
            if component == "." { continue }
            if component == ".." { _ = current.popLast(); continue }
            let candidate = "/" + (current + [component]).joined(separator: "/")
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: candidate) {
                hops += 1
                guard hops <= 40 else { return nil }
                if target.hasPrefix("/") { current = [] }
                queue += target.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed()
                continue
            }
            current.append(component)
        }
        return "/" + current.joined(separator: "/")
    }

    /// Whether `written` resolves to a place strictly inside `directory` (both resolved).
    static func isInside(_ written: String, directory: URL) -> Bool {
        guard let target = resolve(written, in: directory), let root = resolve(".", in: directory) else { return false }
        let prefix = root == "/" ? "/" : root + "/"
        return target.hasPrefix(prefix) && target != root
    }
}
