#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPCore

/// The socket address a server binds: IPv4, IPv6 or `localhost`, resolved from a host and port
/// (the command line's `--listen` text is parsed apart, by the commands' `ListenAddress`).
struct BindAddress {
    var storage = sockaddr_storage()
    var length: socklen_t
    var family: Int32
    var isLoopback: Bool
    var urlHost: String

    init(host: String, port: UInt16) throws(HTTPError) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            family = AF_INET
            isLoopback = UInt32(bigEndian: v4.s_addr) >> 24 == 127
            urlHost = name
        } else if inet_pton(AF_INET6, name, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            family = AF_INET6
            isLoopback = withUnsafeBytes(of: v6) { Array($0) == Array(repeating: 0, count: 15) + [1] }
            urlHost = "[\(name)]"
        } else {
            throw HTTPError(.invalidRequest, "'\(host)' is not an IP address to listen on; use 127.0.0.1.")
        }
    }

    func listen() throws(HTTPError) -> (descriptor: Int32, port: UInt16) {
        let descriptor = SocketPlatform.streamSocket(family: family)
        guard descriptor >= 0 else { throw HTTPError(.other, "Could not create a socket: \(errnoText()).") }
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = storage
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, SocketPlatform.listen(descriptor, backlog: 128) == 0 else {
            let reason = errnoText()
            close(descriptor)
            throw HTTPError(.other, "Could not listen on \(urlHost) port \(UInt16(bigEndian: port(of: storage))): \(reason).")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        return (descriptor, UInt16(bigEndian: port(of: actual)))
    }

    private func port(of storage: sockaddr_storage) -> UInt16 {
        withUnsafeBytes(of: storage) { bytes in
            family == AF_INET
                ? bytes.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
                : bytes.load(fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self)
        }
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}

