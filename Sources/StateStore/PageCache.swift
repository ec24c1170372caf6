#if canImport(Glibc)
import Glibc
#endif

/// The system's cache of file pages.
enum PageCache {
    /// Asks the system to drop `path`'s pages from its cache, for a file written and flushed to disk
    /// that this process will not read again. On Linux, new pages then come from what was just
    /// released rather than from memory untouched for a while, which on a virtual machine can cost
    /// ten times as much to write into. Elsewhere, and on any error, nothing happens: it is advice.
    static func release(_ path: String) {
        #if os(Linux)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        close(descriptor)
        #endif
    }
}
