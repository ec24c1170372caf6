import Foundation
import HTTPCore
import HTTPClient
import HTTPServer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking TCP connection to a server the test started on 127.0.0.1, for sending exactly the
/// bytes a test wants (malformed requests, requests in pieces, keep-alive). Every read is bounded
/// by a receive timeout. Use it from a thread of its own (`onOwnThread`): it blocks.
public final class LoopbackConnection: Sendable {
    public let descriptor: Int32
    private let isClosed = Locked(false)

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    public init(port: UInt16, timeout seconds: Int = 10) throws {
        descriptor = SocketPlatform.streamSocket(family: AF_INET)
        guard descriptor >= 0 else { throw Refused(description: "no socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            // Through the close-once path: a throwing initializer of a class runs `deinit` too, and
            // a second close(2) would shut whatever socket or pipe has taken the number since.
            close()
            throw Refused(description: "cannot connect to 127.0.0.1:\(port): \(reason)")
        }
        SocketPlatform.configureConnection(descriptor)
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Sends bytes; returns how many went out (negative when the server has closed).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { sendBytes(descriptor, $0.baseAddress, $0.count) }
    }

    @discardableResult
    public func send(_ text: String) -> Int { send(Array(text.utf8)) }

    /// Reads until the server closes the connection (or the receive timeout passes).
    public func readToEnd() -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads one response: its head and a `Content-Length` body.
    public func readResponse() -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { break }
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends a request and reads one response.
    public func exchange(_ text: String) -> String {
        send(text)
        return readResponse()
    }

    /// Closes once; later calls (and the deinit) do nothing, so a reused descriptor is never hit.
    public func close() {
        let first = isClosed.withLock { isClosed in
            defer { isClosed = true }
            return !isClosed
        }
        if first { _ = closeDescriptor(descriptor) }
    }

    /// One connection, one request, everything the server sends until it closes; on its own thread.
    public static func exchange(port: UInt16, _ text: String, timeout: Int = 10) async throws -> String {
        try await onOwnThread {
            let connection = try LoopbackConnection(port: port, timeout: timeout)
            connection.send(text)
            return connection.readToEnd()
        }
    }
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}

private func sendBytes(_ descriptor: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
    SocketPlatform.send(descriptor, pointer, count)
}
