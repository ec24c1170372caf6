import Foundation
import HTTPCore
import HTTPClient
import HTTPServer
import RealtimeServer
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `serve` is reachable from the internet: sockets that never send a byte, and more requests than
/// the processors can answer in Apple's budget, must not turn genuine requests into failures.
@Suite("serve keeps answering Apple on a hostile network", .serialized)
struct HostileNetworkTests {
    /// 600 client sockets and the server's side of them need more descriptors than macOS gives by default.
    private func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(resource, &limit)
    }

    @Test("600 connections that never send a byte, beyond a cap of 64, make no genuine request fail")
    func idleFlood() async throws {
        raiseOpenFileLimit(to: 4096)
        let running = try RunningService(snapshot: try snapshot(), maxConnections: 64, transport: .live)
        var idle: [LoopbackConnection] = []
        defer { for connection in idle { connection.close() } }
        var answered = 0
        var failures: [String] = []
        // Genuine requests one after another, each on a new connection as Apple's may be, while the
        // flood arrives: 5 after every 50 idle sockets.
        for round in 0..<12 {
            for _ in 0..<50 { idle.append(try LoopbackConnection(port: running.server.port)) }
            for _ in 0..<5 {
                do {
                    // Signed as it is sent, as Apple does: on a starved machine the rounds may outlast
                    // serve's five-minute freshness window.
                    let response = try await running.post(try running.signed(requestBody()))
                    if response.status == 200, String(decoding: response.body, as: UTF8.self).contains(messageId) {
                        answered += 1
                    } else {
                        failures.append("round \(round): HTTP \(response.status)")
                    }
                } catch {
                    failures.append("round \(round): \(error)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(answered == 60)
        let statistics = running.server.statistics
        // Idle sockets made room for the genuine client: evicted at the cap, or closed by the head
        // timeout first when the machine is slow enough for it to pass.
        #expect(statistics.evicted + statistics.closedHeadTimeout >= 600 - 64, "\(statistics)")
        #expect(statistics.evicted > 0)
        #expect(statistics.refused == 0)
        #expect(statistics.openConnections <= 64 + 1)
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        // Reading /metrics is one more connection at the cap, so it may have evicted one more.
        let evictedLine = metrics.split(separator: "\n").first { $0.hasPrefix("retention_sync_connections_closed_total{reason=\"evicted\"} ") }
        let shown = evictedLine.flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect(shown.map { $0 >= statistics.evicted } == true, "\(String(describing: evictedLine))")
        #expect(metrics.contains("# TYPE retention_sync_open_connections gauge"))
        func gauge(_ name: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        // The /metrics request itself is in flight: at least one open connection is not idle.
        let idleShown = try #require(gauge("retention_sync_idle_connections")), openShown = try #require(gauge("retention_sync_open_connections"))
        #expect(idleShown < openShown, "idle \(idleShown), open \(openShown)")
    }

    @Test("requests that waited past the shed threshold behind a busy loop are answered {} at once and counted")
    func overloadSheds() async throws {
        // One loop, and every real answer keeps it busy for 150 ms: requests that arrive together
        // wait behind each other, and those past 250 ms are shed instead of answered late.
        let running = try RunningService(snapshot: try snapshot(), eventLoops: 1, shedAfter: 0.25, transport: .live, afterAnswer: { response in
            if response.body.count > 2 { usleep(150_000) }
        })
        let body = try running.signed(requestBody())
        let client = CurlHTTPClient(configuration: .init(maxConcurrentTransfers: 10))
        let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            for _ in 0..<10 { group.addTask { try await running.post(body, client: client) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(responses.count == 10)
        #expect(responses.allSatisfy { $0.status == 200 })
        let shed = responses.filter { $0.body == Data("{}".utf8) }.count
        let answered = responses.filter { String(decoding: $0.body, as: UTF8.self).contains(messageId) }.count
        #expect(shed >= 1, "nothing was shed")
        #expect(answered >= 1)
        #expect(shed + answered == 10)
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("retention_sync_requests_total{environment=\"production\",outcome=\"shed\"} \(shed)"), "\(metrics)")
        #expect(running.log.filter { $0.contains("\"outcome\":\"shed\"") }.count == shed)
    }
}
