public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place that words file-system failures for people: which path, what failed, what to do —
/// never Foundation's error dump. Every file a command reads or writes goes through here.
public enum FileProblem {
    /// The POSIX error underneath a Foundation error, when there is one.
    static func posixCode(_ error: any Error) -> Int32? {
        if let error = error as? POSIXError { return error.code.rawValue }
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain { return Int32(nsError.code) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying !== nsError {
            return posixCode(underlying)
        }
        if let error = error as? CocoaError {
            switch error.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
            case .fileReadNoPermission, .fileWriteNoPermission: return EACCES
            case .fileWriteVolumeReadOnly: return EROFS
            case .fileWriteOutOfSpace: return ENOSPC
            case .fileWriteFileExists: return EEXIST
            default: return nil
            }
        }
        return nil
    }

    /// What went wrong and what to do, for a failed read or write of `path`.
    static func reason(_ error: any Error, path: String, writing: Bool) -> String {
        switch posixCode(error) {
        case ENOENT?:
            return writing ? "a directory on the way does not exist; create it or choose another path"
                : "no such file; check the path"
        case EACCES?, EPERM?:
            return writing ? "permission denied; make the directory writable for this user, or choose another path"
                : "permission denied; make the file readable for this user"
        case EROFS?:
            return "the file system is read-only; choose a path on a writable disk"
        case EISDIR?:
            return "it is a directory; give the path of a file"
        case ENOTDIR?:
            return "a part of the path is a file, not a directory; check the path"
        case ENOSPC?, EDQUOT?:
            return "the disk is full; free some space and run the command again"
        case EEXIST?:
            return "it already exists; remove it or choose another path"
        case let code?:
            return String(cString: strerror(code)).lowercased()
        case nil:
            return (error as NSError).localizedFailureReason ?? "the operating system refused it"
        }
    }

    /// `cannot read the saved plan p.json: no such file; check the path`.
    public static func reading(_ what: String, _ path: String, _ error: any Error) -> CommandError {
        CommandError("cannot read \(what) \(path): \(reason(error, path: path, writing: false))")
    }

    public static func writing(_ what: String, _ path: String, _ error: any Error) -> CommandError {
        CommandError("cannot write \(what.isEmpty ? "" : what + " ")\(path): \(reason(error, path: path, writing: true))")
    }

    /// The nearest existing ancestor of `url` when it is a file: writing below it cannot work.
    static func fileInTheWay(of url: URL) -> URL? {
        var parent = url.deletingLastPathComponent()
        while parent.path != "/" && !parent.path.isEmpty {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory) {
                return isDirectory.boolValue ? nil : parent
            }
            parent = parent.deletingLastPathComponent()
        }
        return nil
    }

    /// Why JSON could not be decoded, in a few words (never a `DecodingError` dump).
    public static func decodingReason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            let path = (context.codingPath + [key]).map(\.stringValue).filter { !$0.isEmpty }.joined(separator: ".")
            return "missing '\(path)'"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "'\(path)' has the wrong type"
        case .dataCorrupted(let context)?:
            return context.codingPath.isEmpty ? "not valid JSON (corrupt or cut short)"
                : "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has an invalid value"
        default:
            return "not valid JSON"
        }
    }
}

/// Reads a file named on the command line; `what` names it for the message ("the saved plan").
public func readFile(_ path: String, what: String, context: CommandContext) throws(CommandError) -> Data {
    let url = context.url(path)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
        throw CommandError("cannot read \(what) \(path): it is a directory; give the path of a file")
    }
    do {
        return try Data(contentsOf: url)
    } catch {
        throw FileProblem.reading(what, path, error)
    }
}

/// Writes text to a file given on the command line (see `OutputFile` for what is never replaced).
public func writeFile(_ text: String, to path: String, context: CommandContext) throws(CommandError) {
    try OutputFile.write(text, to: path, context: context)
}
