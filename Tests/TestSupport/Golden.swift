import Foundation
public import Testing

/// Golden files: what a person reads is pinned in `fixtures/`.
///
/// With `UPDATE_GOLDEN=1` the file is rewritten and the check still FAILS, so that a run that
/// records can never pass unnoticed: review the diff, then run again without the variable.
public enum Golden {
    public static var isRecording: Bool { ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" }

    public static func expect(_ actual: String, matches relativePath: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let url = Repository.url(relativePath)
        if isRecording {
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(actual.utf8).write(to: url, options: .atomic)
                Issue.record("Recorded \(relativePath); review the diff, then run the tests again without UPDATE_GOLDEN.",
                             sourceLocation: sourceLocation)
            } catch {
                Issue.record("Could not record \(relativePath): \(error)", sourceLocation: sourceLocation)
            }
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("No golden file \(relativePath); record it with UPDATE_GOLDEN=1 swift test.",
                         sourceLocation: sourceLocation)
            return
        }
        if actual != expected {
            Issue.record("\(relativePath) differs from the output:\n\(firstDifference(expected, actual))\n(after a deliberate change: UPDATE_GOLDEN=1 swift test, review, run again)",
                         sourceLocation: sourceLocation)
        }
    }

    /// The first line where two texts differ, for a readable failure.
    static func firstDifference(_ expected: String, _ actual: String) -> String {
        let lhs = expected.components(separatedBy: "\n"), rhs = actual.components(separatedBy: "\n")
        for index in 0..<max(lhs.count, rhs.count) {
            let left = index < lhs.count ? lhs[index] : "<end of file>"
            let right = index < rhs.count ? rhs[index] : "<end of output>"
            if left != right { return "line \(index + 1):\n  golden: \(left)\n  output: \(right)" }
        }
        return "(they differ only in line endings)"
    }
}
