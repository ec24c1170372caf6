import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes a file it was asked for (`--out`, `--snapshot-out`, `--report`).
///
/// `-` is standard output. A regular file (or a path that does not exist yet) is replaced
/// atomically: a temporary file beside it, then a rename, so a reader never sees half a file.
/// Anything else that already exists — a FIFO, a device such as `/dev/stdout` or `/dev/null`, or a
/// symbolic link — is opened and written like a shell's `>` does, and never replaced: renaming over
/// it would put a regular file where the system or the user keeps something else. A directory is
/// refused.
public enum OutputFile {
    enum Destination: Equatable {
        case standardOutput
        case replaceAtomically(URL)
        case writeInPlace(URL)
    }

    static func destination(for path: String, context: CommandContext) throws(CommandError) -> Destination {
        if path == "-" { return .standardOutput }
        let url = context.url(path)
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            return .replaceAtomically(url)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return .replaceAtomically(url)
        case S_IFDIR:
            throw CommandError("cannot write \(path): it is a directory. Give a file path (or - for standard output).")
        case S_IFLNK:
            var target = stat()
            if stat(url.path, &target) == 0, target.st_mode & S_IFMT == S_IFDIR {
                throw CommandError("cannot write \(path): it leads to a directory. Give a file path (or - for standard output).")
            }
            return .writeInPlace(url)
        default:
            return .writeInPlace(url)
        }
    }

    public static func write(_ text: String, to path: String, context: CommandContext) throws(CommandError) {
        switch try destination(for: path, context: context) {
        case .standardOutput:
            context.console.write(text)
        case .writeInPlace(let url):
            let descriptor = open(url.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw FileProblem.writing("", path, POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            defer { close(descriptor) }
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let result = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw FileProblem.writing("", path, POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                }
                written += result
            }
        case .replaceAtomically(let url):
            if let file = FileProblem.fileInTheWay(of: url) {
                throw CommandError("cannot write \(path): \(file.path) is a file, not a directory; choose another path")
            }
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: url, options: .atomic)
            } catch {
                throw FileProblem.writing("", path, error)
            }
        }
    }
}
