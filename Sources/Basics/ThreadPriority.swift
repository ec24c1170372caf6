#if os(Linux)
import CEventLoop
#elseif canImport(Darwin)
import Darwin
#endif

/// How much of the processor a thread of the calling process gets when threads compete for it.
public enum ThreadPriority {
    /// Makes the calling thread yield to the process's other threads when they compete for a core
    /// (Linux: its nice value raised by `steps`; a thread's work done later, not less of it). Helpers
    /// that read ahead of one thread everything waits on use it, so that thread is not starved.
    public static func lowerCurrent(by steps: Int32) {
        #if os(Linux)
        _ = shim_lower_current_thread_priority(steps)
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }
}
