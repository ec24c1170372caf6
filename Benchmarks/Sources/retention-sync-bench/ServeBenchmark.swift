import Basics
import Crypto
import EventContract
import EventStore
import Operations
import StateStore
import Foundation
import RetentionMessagingModels
import Runtime
import RealtimeServer
import HTTPCore
import HTTPServer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `close(2)`, which the connection type's own `close()` hides.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// `kill(2)`, which `ServeProcess.kill()` hides.
private func sendSignal(_ pid: Int32, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// `retention-sync serve` in its own process on a free loopback port, with a 1,000-rule snapshot,
/// driven by a keep-alive load generator in this process at several concurrency levels. Every
/// request carries a genuine signedPayload (verified by the server: one ES256 check per request,
/// the chain from its cache) and walks all 1,000 rules; offers are also signed.
///
/// With `--recording`, a second serve process records every decision (pseudonym secret set, events to
/// a folder through a spool), and each run goes to both servers back to back, so machine noise falls
/// on both; afterwards the events stored are counted against the answers the clients received.
@Sendable func serveBenchmark(_ arguments: [String]) async throws {
    let options = try ServeBenchOptions(arguments)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let chain = try AppleStyleSigningChain(name: "bench")
    try Data(chain.root.pem.utf8).write(to: directory.appendingPathComponent("root.pem"))
    try Data(ES256PrivateKey.generate().pkcs8PEM.utf8).write(to: directory.appendingPathComponent("offer.p8"))
    try serveSnapshot(targeted: options.facts != nil).sealed().encoded().write(to: directory.appendingPathComponent("snapshot.json"))
    if options.components {
        try componentCosts(chain: chain, snapshot: directory.appendingPathComponent("snapshot.json"))
    }

    // The floor a request cannot go below: one ES256 check (and for an offer one signature), in CPU time.
    let floor = es256Floor()
    let servers = try (options.workerCounts.map { $0.map(Optional.some) } ?? [nil]).map { (workers: Int?) in
        try ServeProcess(binary: options.binary, directory: directory, name: workers.map { "server-\($0)-workers" } ?? "server",
                         arguments: workers.map { ["--workers", String($0)] } ?? [])
    }
    defer { servers.forEach { $0.kill() } }
    let events = directory.appendingPathComponent("events")
    let secret = PseudonymSecret.generate()
    if let customers = options.facts {
        try await publishFacts(customers: customers, secret: secret, to: events)
    }
    let recorder = try options.recording ? ServeProcess(
        binary: options.binary, directory: directory, name: "recording",
        arguments: ["--events", events.path, "--event-spool", directory.appendingPathComponent("spool").path,
                    "--flush-interval", ServeProcess.number(ServeProcess.flushInterval)],
        environment: options.control ? [:] : [PseudonymSecret.variable: secret]) : nil
    defer { recorder?.kill() }

    var run = ServeBenchRun(options: options, servers: servers, recorder: recorder, floor: floor)
    run.printHeader(events: events)
    for (label, product) in [("message", "com.example.monthly"), ("offer (signed)", "com.example.weekly")] {
        try run.measure(label: label, product: product, chain: chain)
    }
    run.printGrowth()
    for server in servers { _ = server.stop() }
    guard let recorder else { return }
    try run.finishRecording(recorder, events: events)
}

/// What `retention-sync-bench serve` was asked for.
private struct ServeBenchOptions {
    var duration: Double
    var levels: [Int]
    var binary: String
    var recording: Bool
    /// The comparison's noise floor: the second server has every recording option but no secret, so
    /// it records nothing, and the difference printed is what the machine alone makes of two equal servers.
    var control: Bool
    var repeats: Int
    /// How cost grows with threads: one serve per worker count, each driven alike ("all" is one per processor).
    var workerCounts: [Int]?
    var noRate: Bool
    var components: Bool
    /// With `--recording`: a facts table of this many customers (the load's 64 among them) beside the
    /// recording server's events, and a `match.customer` rule every request checks.
    var facts: Int?

    init(_ arguments: [String]) throws {
        func option(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        duration = option("--duration").flatMap(Double.init) ?? 4
        levels = option("--concurrency").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1, 8, 64]
        binary = option("--binary") ?? Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("retention-sync").path
        recording = arguments.contains("--recording") || arguments.contains("--control")
        control = arguments.contains("--control")
        repeats = max(1, option("--repeat").flatMap(Int.init) ?? 1)
        workerCounts = try option("--workers").map(parseWorkerCounts)
        noRate = arguments.contains("--no-rate")
        components = arguments.contains("--components")
        facts = option("--facts").flatMap(Int.init)
        if facts != nil && !(recording && !control) {
            throw BenchmarkError("--facts N needs --recording: only a server that records (it has the pseudonym secret) reads customer facts")
        }
        if workerCounts != nil && recording {
            throw BenchmarkError("--workers compares servers with different worker counts; use it without --recording or --control")
        }
    }
}

/// The measured rows of one `serve` benchmark and what the summaries after them need.
private struct ServeBenchRun {
    let options: ServeBenchOptions
    let servers: [ServeProcess]
    let recorder: ServeProcess?
    let floor: (verify: Double, sign: Double)
    var growth: [(row: String, workers: Int, run: MeasuredRun)] = []
    var answeredWhileRecording = 0
    var throughputChanges: [Double] = []
    var flatOut: (off: [MeasuredRun], on: [MeasuredRun]) = ([], [])
    var runIndex = 0

    init(options: ServeBenchOptions, servers: [ServeProcess], recorder: ServeProcess?, floor: (verify: Double, sign: Double)) {
        self.options = options
        self.servers = servers
        self.recorder = recorder
        self.floor = floor
    }

    var labelWidth: Int { options.recording ? 58 : (options.workerCounts == nil ? 46 : 58) }

    func printHeader(events: URL) {
        print("serve: retention-sync serve (its own process) on 127.0.0.1:\(servers.map { String($0.port) }.joined(separator: ", ")), 1,000-rule snapshot, every rule evaluated;")
        print("       keep-alive clients in this process, \(options.duration) s per run, genuine signedPayloads (fresh ES256 check each);")
        print("       \"at N/s\": requests sent on a fixed schedule, latency counted from when each was due")
        if let recorder {
            print("       recording: a second serve on 127.0.0.1:\(recorder.port) with \(PseudonymSecret.variable) set records every decision")
            print("       to --events \(events.path) (flushed every \(ServeProcess.number(ServeProcess.flushInterval)) s); each run goes to both servers, back to back,")
            print("       alternating which goes first; CPU is read \(ServeProcess.number(settle)) s after each run so the last flush is counted")
        }
        if let workerCounts = options.workerCounts {
            print("       one serve per worker count (--workers \(workerCounts.map(String.init).joined(separator: ", "))); "
                  + "this machine has \(ProcessInfo.processInfo.activeProcessorCount) processors")
        }
        print(String(format: "       floor, in this process's CPU time: one ES256 verify %.1f µs, one ES256 sign %.1f µs; "
                     + "÷ floor = server CPU/req ÷ verify (messages) or ÷ (verify + sign) (offers)", floor.verify, floor.sign))
        print(String(repeating: " ", count: labelWidth + 2) + "req/s     p50      p99    p99.9   server CPU/req   errors   ÷ floor")
    }

    /// Every row of one kind of request: each level at full speed, then concurrency 64 at the rate the README's targets name.
    mutating func measure(label: String, product: String, chain: AppleStyleSigningChain) throws {
        // Distinct payloads per connection, signed now so they stay inside --max-age for the run.
        let payloads = try (0..<64).map { index in
            let request = DecodedRealtimeRequestBody(
                originalTransactionId: String(2_000_000_000_000_000 + index), appAppleId: 1_234_567_890, productId: product,
                userLocale: "en-US", requestIdentifier: UUID().uuidString.lowercased(), environment: "Production",
                signedDate: SystemClock().time().milliseconds)
            let signed = try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(request)))
            let body = #"{"signedPayload":"\#(signed)"}"#
            return Array("POST /apple HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        }
        let target: Double = product == "com.example.monthly" ? 4_000 : 2_500
        let runs: [(concurrency: Int, rate: Double?)] = options.levels.map { ($0, nil) } + (options.noRate ? [] : [(64, target)])
        let floorCPU = product == "com.example.monthly" ? floor.verify : floor.verify + floor.sign
        for (concurrency, offered) in runs {
            let row = "  \(label), concurrency \(concurrency)" + (offered.map { String(format: " at %.0f/s", $0) } ?? "")
            if let recorder {
                compareRecording(recorder, row: row, concurrency: concurrency, payloads: payloads, offered: offered)
            } else {
                measureServers(row: row, concurrency: concurrency, payloads: payloads, offered: offered, floorCPU: floorCPU)
            }
        }
    }

    private mutating func measureServers(row: String, concurrency: Int, payloads: [[UInt8]], offered: Double?, floorCPU: Double) {
        for (index, server) in servers.enumerated() {
            let workers = options.workerCounts?[index]
            let measured = measureRun(server, concurrency: concurrency, duration: options.duration, payloads: payloads, rate: offered)
            print(measured.line(row + (workers.map { ", \($0) worker" + ($0 == 1 ? "" : "s") } ?? ""), width: labelWidth, floor: floorCPU))
            if let workers, offered == nil { growth.append((row, workers, measured)) }
        }
    }

    /// Off then on, then on then off: a machine that drifts during the run favours neither.
    private mutating func compareRecording(_ recorder: ServeProcess, row: String, concurrency: Int, payloads: [[UInt8]], offered: Double?) {
        let (server, duration) = (servers[0], options.duration)
        var offRuns: [MeasuredRun] = []
        var onRuns: [MeasuredRun] = []
        for _ in 0..<options.repeats {
            for recordingFirst in runIndex % 2 == 0 ? [false, true] : [true, false] {
                if recordingFirst {
                    onRuns.append(measureRun(recorder, concurrency: concurrency, duration: duration, payloads: payloads, rate: offered, settle: settle))
                } else {
                    offRuns.append(measureRun(server, concurrency: concurrency, duration: duration, payloads: payloads, rate: offered, settle: settle))
                }
            }
            runIndex += 1
        }
        guard let off = MeasuredRun.combined(offRuns), let on = MeasuredRun.combined(onRuns) else { return }
        answeredWhileRecording += on.answered
        print(off.line(row + ", recording off", width: labelWidth))
        print(on.line(row + (options.control ? ", control (no secret)" : ", recording on"), width: labelWidth))
        let throughput = on.rate / off.rate - 1
        if offered == nil {
            throughputChanges.append(throughput)
            flatOut.off.append(off)
            flatOut.on.append(on)
        }
        print((options.control ? "    two equal servers differ by " : "    recording costs ") + percent(throughput) + " req/s, "
              + percent(on.cpuPerRequest / off.cpuPerRequest - 1) + " CPU/req" + (offered == nil ? "" : " (req/s set by the schedule)"))
    }

    func printGrowth() {
        print("  server peak RSS: \(servers.map { peakRSS($0.process.processIdentifier) }.joined(separator: ", ")) (VmHWM)"
              + (recorder.map { ", recording server \(peakRSS($0.process.processIdentifier))" } ?? ""))
        guard let workerCounts = options.workerCounts, let first = workerCounts.first else { return }
        print("  how it grows with workers (flat out; each figure ÷ the \(first)-worker one):")
        for row in growth.map(\.row).reduce(into: [String](), { if !$0.contains($1) { $0.append($1) } }) {
            let measured = growth.filter { $0.row == row }
            guard let base = measured.first?.run, base.rate > 0, base.cpuPerRequest > 0 else { continue }
            print("  " + row + ": " + measured.map { entry in
                String(format: "%d → %.0f req/s (%.2f×), %.0f µs/req (%.2f×)", entry.workers, entry.run.rate, entry.run.rate / base.rate,
                       entry.run.cpuPerRequest, entry.run.cpuPerRequest / base.cpuPerRequest)
            }.joined(separator: "; "))
        }
    }

    /// The pooled cost of recording, then the recording server's own count of what it stored.
    func finishRecording(_ recorder: ServeProcess, events: URL) throws {
        if let worst = throughputChanges.min() {
            // Pooled: all flat-out requests and seconds of each side, so one noisy level weighs by its length only.
            func pooled(_ runs: [MeasuredRun]) -> (rate: Double, cpuPerRequest: Double) {
                let answered = Double(runs.map(\.answered).reduce(0, +))
                return (answered / runs.map(\.seconds).reduce(0, +), runs.map(\.cpuSeconds).reduce(0, +) / answered * 1e6)
            }
            let (off, on) = (pooled(flatOut.off), pooled(flatOut.on))
            let change = on.rate / off.rate - 1
            print((options.control ? "  control, flat out, all levels pooled: " : "  recording, flat out, all levels pooled: ") + percent(change) + " req/s, "
                  + percent(on.cpuPerRequest / off.cpuPerRequest - 1) + " CPU/req; worst level " + percent(worst) + " req/s (target: at most 5% lower; pooled "
                  + (change >= -0.05 ? "within it)" : "outside it)"))
        }
        // SIGTERM makes serve flush its queue and print what it recorded and stored before it exits.
        let stdout = recorder.stop()
        let summary = stdout.split(separator: "\n").first { $0.hasPrefix("events: ") }
        print("  recording server at exit: \(summary ?? "no events line on its stdout")")
        let lines = try decisionLines(under: events)
        print("events: \(lines) lines for \(answeredWhileRecording) answered requests")
        guard lines == (options.control ? 0 : answeredWhileRecording) else {
            throw BenchmarkError("the recording server stored \(lines) decision events for \(answeredWhileRecording) answered requests")
        }
    }
}

/// How long a recording comparison waits after each run before reading the server's CPU: more than
/// one flush interval, so the run's last flush is inside the figure.
private let settle = ServeProcess.flushInterval + 0.5

private func percent(_ fraction: Double) -> String {
    String(format: "%+.1f%%", fraction * 100)
}

/// One run against one server: what the clients saw and what the server spent.
private struct MeasuredRun {
    var latencies: [UInt64]
    var seconds: Double
    var errors: Int
    var cpuSeconds: Double

    /// Several runs as one: their requests, seconds and CPU added up.
    static func combined(_ runs: [MeasuredRun]) -> MeasuredRun? {
        guard !runs.isEmpty else { return nil }
        return MeasuredRun(latencies: runs.flatMap(\.latencies).sorted(), seconds: runs.map(\.seconds).reduce(0, +),
                           errors: runs.map(\.errors).reduce(0, +), cpuSeconds: runs.map(\.cpuSeconds).reduce(0, +))
    }

    var answered: Int { latencies.count }
    var rate: Double { Double(latencies.count) / seconds }
    var cpuPerRequest: Double { latencies.isEmpty ? 0 : cpuSeconds / Double(latencies.count) * 1e6 }

    func line(_ label: String, width: Int, floor: Double? = nil) -> String {
        func percentile(_ p: Double) -> String {
            guard !latencies.isEmpty else { return "-" }
            return String(format: "%.2f ms", Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6)
        }
        return label.padding(toLength: width, withPad: " ", startingAt: 0)
            + String(format: "%7.0f", rate) + "  " + percentile(0.5) + "  " + percentile(0.99) + "  " + percentile(0.999)
            + String(format: "   %6.0f µs", cpuPerRequest) + "   \(errors)"
            + (floor.map { String(format: "   %7.2f×", cpuPerRequest / $0) } ?? "")
    }
}

/// `--workers 1,2,all`: whole numbers from 1, and `all` for one per processor; repeats dropped, order kept.
private func parseWorkerCounts(_ text: String) throws -> [Int] {
    var counts: [Int] = []
    for part in text.split(separator: ",") {
        let count = part == "all" ? ProcessInfo.processInfo.activeProcessorCount : Int(part) ?? 0
        guard (1...256).contains(count) else {
            throw BenchmarkError("--workers takes whole numbers from 1 to 256 or 'all', separated by commas (got '\(part)')")
        }
        if !counts.contains(count) { counts.append(count) }
    }
    guard !counts.isEmpty else { throw BenchmarkError("--workers needs at least one count, e.g. 1,2,all") }
    return counts
}

/// CPU microseconds of one ES256 verify and one sign over a 32-byte message (what `openssl speed
/// ecdsap256` times), on this thread's clock, so other processes on the machine do not count.
private func es256Floor() -> (verify: Double, sign: Double) {
    let key = ES256PrivateKey.generate()
    let message = CryptoRandom.bytes(32)
    let signature = (try? key.sign(message)) ?? []
    // The median of five rounds, as the server's figure is an average over many requests.
    func cpuMicros(_ work: () -> Void) -> Double {
        work()
        let rounds = (0..<5).map { _ in
            let start = threadCPUSeconds()
            for _ in 0..<400 { work() }
            return (threadCPUSeconds() - start) / 400 * 1e6
        }
        return rounds.sorted()[2]
    }
    let verify = cpuMicros { _ = key.publicKey.verify(signature: signature, message: message) }
    let sign = cpuMicros { _ = try? key.sign(message) }
    return (verify, sign)
}

private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Drives `server` for one run; with `settle`, waits that long after the run before reading its CPU.
private func measureRun(_ server: ServeProcess, concurrency: Int, duration: Double, payloads: [[UInt8]], rate: Double?,
                        settle: Double = 0) -> MeasuredRun {
    let cpuBefore = processCPUSeconds(server.process.processIdentifier)
    let result = runLoad(port: server.port, concurrency: concurrency, duration: duration, payloads: payloads, rate: rate)
    if settle > 0 { usleep(UInt32(settle * 1e6)) }
    let cpu = processCPUSeconds(server.process.processIdentifier) - cpuBefore
    return MeasuredRun(latencies: result.latencies.sorted(), seconds: result.seconds, errors: result.errors, cpuSeconds: cpu)
}

/// The lines of every decision segment stored under `root` (`events/v1/decisions/…/*.ndjson`).
private func decisionLines(under root: URL) throws -> Int {
    let decisions = root.appendingPathComponent("events/v1/decisions")
    guard let files = FileManager.default.enumerator(at: decisions, includingPropertiesForKeys: nil) else { return 0 }
    var lines = 0
    for case let file as URL in files where file.pathExtension == "ndjson" && !file.lastPathComponent.hasPrefix(".") {
        lines += try Data(contentsOf: file).reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }
    return lines
}

/// The secret serve derives pseudonyms from: a fresh one per run, never printed.
private enum PseudonymSecret {
    static let variable = "RETENTION_SYNC_PSEUDONYM_SECRET"
    static func generate() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

/// One `retention-sync serve` process started by the bench on a free loopback port in `directory`;
/// its stdout goes to `<name>.stdout` there, where the port is read from.
private final class ServeProcess {
    let process = Process()
    let port: UInt16
    private let stdout: URL
    /// Seconds between the recording server's flushes (serve's default, given explicitly).
    static let flushInterval = 1.0

    init(binary: String, directory: URL, name: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--env", "production", "--snapshot", "snapshot.json", "--root", "root.pem",
                             "--listen", "127.0.0.1:0", "--path", "/apple", "--max-connections", "256"] + arguments
        process.currentDirectoryURL = directory
        process.environment = ["RETENTION_SYNC_KEY_ID": "BENCHKEY01", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
                               "RETENTION_SYNC_PRIVATE_KEY_FILE": "offer.p8"].merging(environment) { $1 }
        stdout = directory.appendingPathComponent("\(name).stdout")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        // One JSON line per request: written as in production, but not kept.
        process.standardError = FileHandle.nullDevice
        try process.run()
        var port: UInt16?
        for _ in 0..<500 where port == nil && process.isRunning {
            let text = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
            if let range = text.range(of: "http://127.0.0.1:") {
                port = UInt16(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                usleep(20_000)
            }
        }
        guard let port else {
            if process.isRunning { sendSignal(process.processIdentifier, SIGKILL) }
            throw BenchmarkError("serve did not start (\(binary))")
        }
        self.port = port
    }

    /// SIGTERM, then waits for the exit; what the process printed on stdout.
    func stop() -> String {
        if process.isRunning {
            sendSignal(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        return (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
    }

    /// SIGKILL when still running: the bench stopped early.
    func kill() {
        if process.isRunning { sendSignal(process.processIdentifier, SIGKILL) }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// What one request costs in this process, step by step, without sockets.
private func componentCosts(chain: AppleStyleSigningChain, snapshot: URL) throws {
    let bench = try ComponentBench(chain: chain, snapshot: snapshot)
    print("serve: one request's steps in this process (mean of 2,000, this thread's CPU time)")
    try bench.reading()
    let check = try bench.signatureChecks()
    try bench.answering(signatureCheck: check)
    try bench.offer()
    try bench.recording()
}

/// One request and the services that answer it, measured step by step (`componentCosts`).
private struct ComponentBench {
    struct Body: Decodable { var signedPayload: String }

    let chain: AppleStyleSigningChain
    let snapshot: URL
    let request: DecodedRealtimeRequestBody
    let signed: String
    let body: Data
    let httpRequest: HTTPServerRequest
    let service: RealtimeService
    let offerKey = ES256PrivateKey.generate()

    init(chain: AppleStyleSigningChain, snapshot: URL) throws {
        self.chain = chain
        self.snapshot = snapshot
        request = DecodedRealtimeRequestBody(
            originalTransactionId: "2000000000000001", appAppleId: 1_234_567_890, productId: "com.example.monthly",
            userLocale: "en-US", requestIdentifier: UUID().uuidString.lowercased(), environment: "Production",
            signedDate: SystemClock().time().milliseconds)
        signed = try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(request)))
        body = Data(#"{"signedPayload":"\#(signed)"}"#.utf8)
        httpRequest = HTTPServerRequest(method: "POST", target: "/apple", headers: [("Content-Length", "\(body.count)")], body: body)
        service = Self.service(snapshot: snapshot, chain: chain, signingKey: nil)
    }

    static func service(snapshot: URL, chain: AppleStyleSigningChain, signingKey: OfferSigningKey?,
                        recording: RealtimeService.Recording? = nil) -> RealtimeService {
        var configuration = RealtimeService.Configuration(
            endpoints: [RealtimeEndpoint(path: "/apple", environment: .production, source: FileSnapshotSource(path: snapshot.path))],
            trustedRoots: [chain.root], signingKey: signingKey, clock: SystemClock())
        configuration.recording = recording
        let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
        service.reloadSnapshots()
        return service
    }

    /// CPU time of this thread, not wall time: on a shared machine other processes would count too.
    @discardableResult
    func measure(_ label: String, _ work: () throws -> Void) rethrows -> Double {
        let count = 2_000
        try work()
        let start = threadCPUSeconds()
        for _ in 0..<count { try work() }
        let micros = (threadCPUSeconds() - start) / Double(count) * 1e6
        print("  \(label.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%6.1f", micros)) µs")
        return micros
    }

    /// The body and the signed payload read, and the payload verified as serve does.
    func reading() throws {
        let verifier = SignedPayloadVerifier(trustedRoots: [chain.root], appAppleId: 1_234_567_890, environment: .production, maxAge: 300,
                                             clock: SystemClock())
        try measure("decode the body (JSONDecoder)") { _ = try JSONDecoder().decode(Body.self, from: body) }
        measure("read the body (scanner, as serve does)") { _ = FlatJSONObject(body)?.string("signedPayload") }
        try measure("JWS.decode") { _ = try JWS.decode(signed) }
        // Both verifiers give the leaf key its table after this many good signatures; measured from then on.
        for _ in 0..<ES256KeyTables.defaultBuildAfter {
            _ = try verifier.verify(signedPayload: signed)
            _ = service.handle(httpRequest.arrivingNow)
        }
        try measure("verify (chain cached, one ES256 check)") { _ = try verifier.verify(signedPayload: signed) }
    }

    /// The signature arithmetic alone; returns what one check with the key's table costs.
    func signatureChecks() throws -> Double {
        // 200 payloads, each with its own signature, taken in turn: serve never sees one twice, and the
        // arithmetic's branches must not be learnt from one value.
        let signedInputs: [(input: [UInt8], signature: [UInt8])] = try (0..<200).map { _ in
            var fresh = request
            fresh.requestIdentifier = UUID().uuidString.lowercased()
            let parts = try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(fresh))).split(separator: ".")
            return (Array("\(parts[0]).\(parts[1])".utf8), Base64URL.decode(String(parts[2])).map { $0 } ?? [])
        }
        var turn = 0
        func nextSigned() -> (input: [UInt8], signature: [UInt8]) {
            turn = (turn + 1) % signedInputs.count
            return signedInputs[turn]
        }
        let signingInput = signedInputs[0].input
        let leafKey = chain.leaf.publicKey!
        measure("ES256 signature check alone (OpenSSL)") {
            let next = nextSigned()
            _ = leafKey.verify(signature: next.signature, message: next.input)
        }
        // serve checks a leaf that has signed many payloads with a table of the leaf key's multiples.
        let tables = ES256KeyTables(buildAfter: 1)
        _ = tables.verify(signature: signedInputs[0].signature, message: signingInput, key: leafKey)
        let check = measure("ES256 signature check with the key's table") {
            let next = nextSigned()
            _ = tables.verify(signature: next.signature, message: next.input, key: leafKey)
        }
        measure("  of which: s⁻¹ mod n (P256OrderInverse)") {
            _ = nextSigned().signature.withUnsafeBytes { P256OrderInverse.inverse(bigEndian: UnsafeRawBufferPointer(rebasing: $0[32..<64])) }
        }
        try measure("ES256 signature alone (offer signing)") { _ = try offerKey.sign(signingInput) }
        return check
    }

    /// Deciding, writing the answer, and the whole request without sockets.
    func answering(signatureCheck check: Double) throws {
        let engine = DecisionEngine(snapshot: try RuntimeSnapshot.load(contentsOf: snapshot), signer: nil)
        try measure("decide (1,000 rules)") { _ = try engine.decide(request) }
        let answer = RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: "00000000-0000-5000-8000-000000000001"))
        try measure("encode the answer (CanonicalJSON)") { _ = try CanonicalJSON.encode(answer) }
        measure("write the answer (direct, as serve does)") { _ = answer.canonicalJSON }
        // A fresh request each time: serve sheds one that waited more than 0.5 s since it arrived.
        let whole = measure("whole request without sockets (handle)") { _ = service.handle(httpRequest.arrivingNow) }
        print("  " + "  of which: not the signature check".padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: " %6.1f µs", whole - check))
    }

    /// An offer: the same request for the weekly product, whose rule answers with a signed offer.
    func offer() throws {
        let offerSigner = PromotionalOfferSigner(keyId: "BENCHKEY01", issuerId: UUID().uuidString.lowercased(),
                                                 bundleId: "com.example.app", privateKey: offerKey, clock: SystemClock())
        try measure("sign an offer (claims, JWS, signature)") {
            _ = try offerSigner.sign(productId: "com.example.weekly", offerIdentifier: "winback-50", transactionId: request.originalTransactionId)
        }
        var offerRequest = request
        offerRequest.productId = "com.example.weekly"
        let offerBody = Data(#"{"signedPayload":"\#(try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(offerRequest))))"}"#.utf8)
        let offerHTTPRequest = HTTPServerRequest(method: "POST", target: "/apple", headers: [("Content-Length", "\(offerBody.count)")], body: offerBody)
        let offerService = Self.service(snapshot: snapshot, chain: chain,
                                        signingKey: OfferSigningKey(keyId: "BENCHKEY01", issuerId: offerSigner.issuerId, privateKey: offerKey))
        for _ in 0..<ES256KeyTables.defaultBuildAfter { _ = offerService.handle(offerHTTPRequest.arrivingNow) }
        guard offerService.handle(offerHTTPRequest.arrivingNow).status == 200 else { throw BenchmarkError("the offer request was not answered") }
        measure("whole offer request without sockets (handle)") { _ = offerService.handle(offerHTTPRequest.arrivingNow) }
    }

    /// The recording's share on the request's own thread; the events are queued, and stored once at the end.
    func recording() throws {
        let pseudonyms = try PseudonymKey(secret: PseudonymSecret.generate())
        measure("pseudonym (HMAC of the transaction id)") { _ = pseudonyms.pseudonym(request.originalTransactionId) }
        let facts = DecisionFacts(
            time: SystemClock().time().milliseconds, environment: "production", requestIdentifier: request.requestIdentifier,
            customer: pseudonyms.pseudonym(request.originalTransactionId), keyId: pseudonyms.keyId, productId: request.productId,
            localeRequested: "en-US", localeServed: "en-US", flow: "monthly", rule: "message", splitGroup: nil, splitControl: false,
            answer: .message, messageIdentifier: "00000000-0000-5000-8000-000000000998", offerIdentifier: nil,
            alternateProductId: nil, snapshot: String(repeating: "0", count: 64), latencyMicros: 120)
        measure("decision event line (canonical JSON)") { _ = facts.record() }
        measure("  of which: a fresh event id") { _ = EventLine.newEventId() }
        let fixedId = EventLine.newEventId()
        measure("  of which: the line, id given") { _ = facts.record(eventId: fixedId) }
        let folder = snapshot.deletingLastPathComponent().appendingPathComponent("components-events")
        let recorder = EventRecorder(sink: FolderEventSink(root: folder), settings: .init(
            writerId: "components", spool: folder.appendingPathComponent("spool")))
        let record = facts.record()
        measure("queue one event (recorder.record)") { recorder.record(record) }
        let recordingService = Self.service(snapshot: snapshot, chain: chain, signingKey: nil,
                                            recording: RealtimeService.Recording(recorder: recorder, pseudonyms: pseudonyms))
        for _ in 0..<ES256KeyTables.defaultBuildAfter { _ = recordingService.handle(httpRequest.arrivingNow) }
        measure("whole request, decision recorded (handle)") { _ = recordingService.handle(httpRequest.arrivingNow) }
        let stored = Double(DispatchTime.now().uptimeNanoseconds)
        let counters = recorder.close()
        let events = counters.recorded.values.reduce(0, +)
        print("  " + "store the queued events (close)".padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: " %6.1f µs per event (%d events)", (Double(DispatchTime.now().uptimeNanoseconds) - stored) / 1000 / Double(max(events, 1)), events))
    }
}

private extension HTTPServerRequest {
    var arrivingNow: HTTPServerRequest {
        var copy = self
        copy.receivedAt = .now
        return copy
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A facts table of `customers` customers (the load's 64 among them, in the United States) published
/// beside `events`, as `facts publish` does, under the pseudonyms `secret` makes.
private func publishFacts(customers: Int, secret: String, to events: URL) async throws {
    let pseudonyms = try PseudonymKey(secret: secret)
    var facts: [String: CustomerFacts] = [:]
    let now = SystemClock().time().milliseconds
    for index in 0..<max(customers, 64) {
        let pseudonym = index < 64 ? pseudonyms.pseudonym(String(2_000_000_000_000_000 + index)) : pseudonyms.pseudonym("bench-\(index)")
        facts[pseudonym] = CustomerFacts(storefront: index % 3 == 0 ? "DEU" : "USA", firstPurchase: now - Int64(index % 700) * 86_400_000,
                                         inBillingRetry: false, transactionAsOf: now - 86_400_000, renewalAsOf: now - 86_400_000)
        if index < 64 { facts[pseudonym]?.storefront = "USA" }
    }
    let header = FactsTable.Header(bundleId: "com.example.app", environment: "production", keyId: pseudonyms.keyId, count: 0, newestFact: now)
    _ = try await FactsBuild.publish(facts, header: header, builtAt: now, to: FolderObjectStore(root: events))
    print("       facts: a table of \(facts.count) customers beside the recording server's events; every request checks a match.customer rule (storefront DEU) first")
}

/// 998 rules that name both benchmark products but miss on locale, window or split, then a message
/// rule for monthly and an offer rule for weekly; `targeted` puts a rule for German customers first,
/// which every request checks against the customer's facts.
private func serveSnapshot(targeted: Bool = false) -> RuntimeSnapshot {
    let products = ["com.example.monthly", "com.example.weekly"]
    let identifier = { (index: Int) -> String in
        let suffix = String(index)
        return "00000000-0000-5000-8000-" + String(repeating: "0", count: 12 - suffix.count) + suffix
    }
    var rules: [SnapshotRule] = []
    for index in 0..<998 {
        var match = SnapshotMatch(products: products + ["com.example.product\(index % 50)"])
        switch index % 3 {
        case 0: match.locales = ["de-DE", "ja-JP"]
        case 1:
            match.notBefore = 1_700_000_000_000
            match.notAfter = 1_750_000_000_000
        default:
            match.split = SnapshotSplit(salt: "group-\(index % 20)", lowerBucket: 0, upperBucket: 1)
            match.locales = ["en-US"]
        }
        rules.append(SnapshotRule(id: "flow\(index / 100)/rule\(index)", version: "0123456789abcdef", match: match,
                                  response: SnapshotResponse(kind: .message, message: "m\(index)", messageIdentifiers: ["en-US": identifier(index)])))
    }
    if targeted {
        rules.append(SnapshotRule(id: "targeted/germany", version: "0123456789abcdef",
                                  match: SnapshotMatch(products: products, customer: CustomerConditions(storefronts: ["DEU"])),
                                  response: SnapshotResponse(kind: .message, message: "bleib", messageIdentifiers: ["en-US": identifier(997)])))
    }
    rules.append(SnapshotRule(id: "monthly/message", version: "0123456789abcdef", match: SnapshotMatch(products: [products[0]]),
                              response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": identifier(998)])))
    rules.append(SnapshotRule(id: "weekly/offer", version: "0123456789abcdef", match: SnapshotMatch(products: [products[1]]),
                              response: SnapshotResponse(kind: .promotionalOffer, message: "offer",
                                                         messageIdentifiers: ["en-US": identifier(999)], offerIdentifier: "winback-50")))
    return RuntimeSnapshot(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production,
                           localeFallbacks: [:], rules: rules)
}

private final class LoadResult: @unchecked Sendable {
    let lock = NSLock()
    var latencies: [UInt64] = []
    var errors = 0
    var seconds = 0.0
}

/// `concurrency` threads, each with one keep-alive connection, sending until `duration` passes
/// (and at most 2,000,000 requests in all). Without a rate each sends its next request as soon as
/// the answer arrives (the most the server can do; latency then includes the queue the clients
/// themselves build). With a rate, requests go out on a fixed schedule shared by the threads, and a
/// latency counts from when the request was due, not when it could be sent, so a stall is not hidden
/// by the requests it delayed.
private func runLoad(port: UInt16, concurrency: Int, duration: Double, payloads: [[UInt8]], rate: Double? = nil) -> LoadResult {
    let result = LoadResult()
    let group = DispatchGroup()
    let start = DispatchTime.now().uptimeNanoseconds
    let end = start + UInt64(duration * 1e9)
    let perThreadCap = 2_000_000 / concurrency
    for worker in 0..<concurrency {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            var latencies: [UInt64] = []
            latencies.reserveCapacity(100_000)
            var errors = 0
            var connection = LoadConnection(port: port)
            let payload = payloads[worker % payloads.count]
            let interval = rate.map { UInt64(Double(concurrency) / $0 * 1e9) }
            var due = start + (interval ?? 0) * UInt64(worker) / UInt64(concurrency)
            while latencies.count < perThreadCap {
                var before = DispatchTime.now().uptimeNanoseconds
                if let interval {
                    if due > before { usleep(UInt32((due - before) / 1000)) }
                    before = due
                    due += interval
                }
                if before >= end { break }
                if connection == nil { connection = LoadConnection(port: port) }
                guard let open = connection, open.exchange(payload) else {
                    errors += 1
                    connection?.close()
                    connection = nil
                    continue
                }
                latencies.append(DispatchTime.now().uptimeNanoseconds - before)
            }
            connection?.close()
            result.lock.withLock {
                result.latencies += latencies
                result.errors += errors
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
    result.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return result
}

/// One blocking keep-alive connection; `exchange` sends a request and reads a 200 answer.
private struct LoadConnection {
    let descriptor: Int32
    private let buffer: UnsafeMutableRawBufferPointer

    init?(port: UInt16) {
        let descriptor = SocketPlatform.streamSocket(family: AF_INET)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            closeDescriptor(descriptor)
            return nil
        }
        SocketPlatform.configureConnection(descriptor)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        buffer = .allocate(byteCount: 16 * 1024, alignment: 1)
    }

    func close() {
        closeDescriptor(descriptor)
        buffer.deallocate()
    }

    func exchange(_ request: [UInt8]) -> Bool {
        let sent = request.withUnsafeBytes { SocketPlatform.send(descriptor, $0.baseAddress, $0.count) }
        guard sent == request.count else { return false }
        var filled = 0
        while true {
            let count = recv(descriptor, buffer.baseAddress! + filled, buffer.count - filled, 0)
            guard count > 0 else { return false }
            filled += count
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<filled])
            guard let headEnd = find(bytes, [13, 10, 13, 10]) else { continue }
            let head = String(decoding: bytes[0..<headEnd], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 200") else { return false }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if filled >= headEnd + 4 + length { return true }
        }
    }

    private func find(_ bytes: UnsafeRawBufferPointer, _ pattern: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for index in 0...(bytes.count - pattern.count) where bytes[index] == pattern[0] {
            if bytes[index + 1] == pattern[1] && bytes[index + 2] == pattern[2] && bytes[index + 3] == pattern[3] { return index }
        }
        return nil
    }
}

/// User plus system CPU seconds the process has used, from /proc.
private func processCPUSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command name: state is field 3, utime 14 and stime 15 (1-based in proc(5)).
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

private func peakRSS(_ pid: Int32) -> String {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return "unknown" }
    let kilobytes = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
    return String(format: "%.1f MB", kilobytes / 1024)
}
