import Foundation
import HTTPServer
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A socket that listens with a backlog of zero and never accepts, so once its queue is full the
/// kernel drops new handshakes and clients wait until their connect timeout.
final class FullBacklogListener {
    let port: UInt16
    private var descriptors: [Int32] = []

    init() throws {
        let listener = SocketPlatform.streamSocket(family: AF_INET)
        try #require(listener >= 0)
        descriptors.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 0) == 0)
        port = UInt16(bigEndian: address.sin_port)
        var fillers: [pollfd] = []
        for _ in 0..<2 {
            let filler = SocketPlatform.streamSocket(family: AF_INET)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            descriptors.append(filler)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(pollfd(fd: filler, events: Int16(POLLOUT), revents: 0))
        }
        // The queue is full once a filler's handshake has completed (it becomes writable); the
        // kernel then drops the handshakes that follow, the other filler's among them.
        let deadline = Date().addingTimeInterval(10)
        var connected = false
        while !connected, Date() < deadline {
            _ = poll(&fillers, nfds_t(fillers.count), 100)
            connected = fillers.contains { $0.revents & Int16(POLLOUT) != 0 }
        }
        try #require(connected, "no filler connection completed its handshake")
    }

    deinit {
        descriptors.forEach { close($0) }
    }
}
