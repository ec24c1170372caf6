#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls whose spelling differs between Linux's C library and Darwin's, in one place.
public enum SocketPlatform {
    /// A stream socket that is not inherited by child processes (the tests and the demo start some).
    public static func streamSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        return socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(family, SOCK_STREAM, 0)
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptor
        #endif
    }

    public static func listen(_ descriptor: Int32, backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        return Glibc.listen(descriptor, backlog)
        #else
        return Darwin.listen(descriptor, backlog)
        #endif
    }

    /// Sends without raising SIGPIPE when the peer has gone: a flag per call on Linux, a socket
    /// option (set by `configureConnection`) on Darwin.
    public static func send(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        #else
        return Darwin.send(descriptor, bytes, count, 0)
        #endif
    }

    /// `wanted` connections, or fewer when the process's open-file limit (less a reserve for the
    /// listener, files and outgoing connections) cannot hold that many.
    public static func connectionLimit(wanted: Int, reserve: Int = 64) -> Int {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        // Unlimited is the largest value the type holds.
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int32.max) else { return wanted }
        return max(1, min(wanted, Int(clamping: limit.rlim_cur) - reserve))
    }

    /// What every connected socket gets: close-on-exec, no Nagle delay, no SIGPIPE.
    public static func configureConnection(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}

extension timeval {
    init(seconds: Double) {
        let whole = max(0, seconds.rounded(.down))
        self.init(tv_sec: .init(whole), tv_usec: .init(max(1, Int((seconds - whole) * 1e6))))
    }
}
