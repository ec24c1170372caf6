#if os(Linux)
import CEventLoop
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the calling thread as `top -H`, `ps -L`, a debugger and `Thread.current.name` see it.
///
/// Foundation's `Thread.name` setter reaches the system only once `start()` has recorded the new
/// thread, which races with the thread's own first lines (and does nothing before `start()`); a
/// thread it failed to name keeps the name of the thread that created it. This sets it directly.
public enum ThreadName {
    /// The system keeps 15 bytes of a name; longer ones are cut there.
    public static let maximumLength = 15

    public static func setCurrent(_ name: String) {
        var bytes = Array(name.utf8.prefix(maximumLength))
        bytes.append(0)
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                #if os(Linux)
                _ = shim_name_current_thread(characters.baseAddress!)
                #elseif canImport(Darwin)
                _ = pthread_setname_np(characters.baseAddress!)
                #endif
            }
        }
    }
}
