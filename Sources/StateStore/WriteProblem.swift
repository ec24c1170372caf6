public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file could not be written, in the tool's words: never Foundation's
/// `NSCocoaErrorDomain error 512`, always the path at fault, what is wrong with it and what to do.
public enum WriteProblem {
    /// Why writing `file` failed: a parent that is a file, a folder this user may not write, a full
    /// disk, a read-only file system, or the system's own reason.
    public static func reason(writing file: URL, error: (any Error)? = nil) -> String {
        let manager = FileManager.default
        // The nearest part of the path that exists says most: a file where a folder must be, or a folder without write permission.
        var folder = file.deletingLastPathComponent().standardizedFileURL
        while folder.path != "/", !manager.fileExists(atPath: folder.path) {
            folder = folder.deletingLastPathComponent().standardizedFileURL
        }
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: folder.path, isDirectory: &isFolder), !isFolder.boolValue {
            return "\(folder.path) is a file, not a folder, so nothing can be created under it; choose a location whose parents are folders"
        }
        if access(folder.path, W_OK) != 0 {
            let errorText = String(cString: strerror(errno))
            return "this user may not write in \(folder.path) (\(errorText)); make it writable by the user serve runs as, or choose another location"
        }
        if let code = posixCode(of: error) {
            switch code {
            case ENOSPC: return "the disk holding \(folder.path) is full; free space or choose another location"
            case EROFS: return "\(folder.path) is on a read-only file system; choose a writable location"
            case EACCES, EPERM: return "permission denied in \(folder.path); make it writable by this user, or choose another location"
            default: return String(cString: strerror(code))
            }
        }
        return "the system refused the write in \(folder.path); check that it is a writable folder with free space"
    }

    /// The POSIX error code behind a Foundation error, when it carries one.
    static func posixCode(of error: (any Error)?) -> Int32? {
        guard let error else { return nil }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain { return Int32(bridged.code) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        return nil
    }
}
