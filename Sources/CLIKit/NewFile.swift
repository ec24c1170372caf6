public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written once under a name nobody holds yet, whole or not at all (what `import` writes
/// into a manifest directory, where a half-written YAML file would be committed or fail `validate`).
///
/// The bytes go to a hidden temporary file beside the name, `.NAME.PID.partial`, are flushed to
/// disk, and are then hard-linked to the name: `link` is atomic and fails when the name exists, so
/// an existing file is never written over and a reader sees the whole file or none. A process
/// killed before the link leaves only the `.partial` file, which no manifest reader looks at (its
/// name does not end in `.yaml`) and which `removeAbandoned` deletes once its process is gone.
public enum NewFile {
    public static let partialSuffix = ".partial"

    /// The temporary file `process` writes before `url` is linked to it.
    public static func partialURL(for url: URL, process: Int32 = getpid()) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(process)\(partialSuffix)")
    }

    /// Writes `data` at `url` when nothing is there: true when written, false when the name is
    /// taken (nothing was written then). Throws, with nothing left behind, when writing fails.
    public static func create(_ data: Data, at url: URL) throws(CommandError) -> Bool {
        let partial = partialURL(for: url)
        defer { unlink(partial.path) }
        var descriptor = open(partial.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == EEXIST {
            // Left by a killed process that had this process's id before: nobody else writes it.
            unlink(partial.path)
            descriptor = open(partial.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw failure(url, errno) }
        var written = 0
        let bytes = [UInt8](data)
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                throw failure(url, code)
            }
            written += result
        }
        // On disk before the name points at it, so a crash of the machine cannot leave the name on an empty file.
        let synced = fsync(descriptor) == 0 ? 0 : errno
        close(descriptor)
        if synced != 0 { throw failure(url, synced) }
        if link(partial.path, url.path) == 0 { return true }
        let code = errno
        if code == EEXIST { return false }
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS else { throw failure(url, code) }
        // A file system without hard links (FAT, some network shares): claim the name, then rename
        // the whole file over the claim. Only a kill between the two leaves an empty file there.
        let claim = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard claim >= 0 else {
            if errno == EEXIST { return false }
            throw failure(url, errno)
        }
        close(claim)
        guard rename(partial.path, url.path) == 0 else {
            let renaming = errno
            unlink(url.path)
            throw failure(url, renaming)
        }
        return true
    }

    /// Deletes the `.PREFIX….PID.partial` files in `directory` whose process no longer runs (a
    /// write that was killed), and returns their names, sorted. A running process's file is left.
    @discardableResult
    public static func removeAbandoned(in directory: URL, prefix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed: [String] = []
        for name in names.sorted() where name.hasPrefix("." + prefix) && name.hasSuffix(partialSuffix) {
            let stem = name.dropLast(partialSuffix.count)
            guard let dot = stem.lastIndex(of: "."), let process = Int32(stem[stem.index(after: dot)...]), process > 0 else { continue }
            // ESRCH: no such process. EPERM means it runs under another user: leave its file alone.
            guard kill(process, 0) != 0 && errno == ESRCH else { continue }
            if unlink(directory.appendingPathComponent(name).path) == 0 { removed.append(name) }
        }
        return removed
    }

    static func failure(_ url: URL, _ code: Int32) -> CommandError {
        FileProblem.writing("", url.path, POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
    }
}
